"""Question keywords with NLTK: tokens minus NLTK's English stopwords.

The stopword list ships in models/data/nltk_data (nltk.download cannot reach its server
offline); a user's own nltk_data folders are searched first.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import nltk
from nltk.tokenize import wordpunct_tokenize

_BUNDLED = Path(__file__).resolve().parent / "data" / "nltk_data"


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    if str(_BUNDLED) not in nltk.data.path:
        nltk.data.path.append(str(_BUNDLED))
    from nltk.corpus import stopwords as corpus

    return frozenset(corpus.words("english"))


def words(text: str) -> list[str]:
    """Lower-cased word tokens, stopwords kept, in order."""
    # wordpunct_tokenize is a regex tokenizer: no punkt model to download.
    return [t for t in wordpunct_tokenize(text.lower()) if t.isalnum()]


def keywords(text: str) -> list[str]:
    """Lower-cased word tokens that are not stopwords, in order, repeats kept."""
    stop = stopwords()
    return [t for t in words(text) if t not in stop]
