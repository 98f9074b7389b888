"""Finding videos in a large library: by name and by what each holds (the kinds tracked, the
words said and shown, what people do, what the picture shows), in the order a person asks for.

What a video holds is read from its tables once (five small queries) and kept while the video
is the same one (its id and ingest time), so narrowing 500 videos as a person types reads no
database after the first pass.
"""

from __future__ import annotations

import re
import sqlite3
from functools import lru_cache

from backend.errors import InputError
from backend.library import VideoEntry

SORTS = {
    "newest": (lambda e: e.ingested_at, True),
    "oldest": (lambda e: e.ingested_at, False),
    "name": (lambda e: e.name.lower(), False),
    "longest": (lambda e: e.duration, True),
    "shortest": (lambda e: e.duration, False),
}
_WORDS_KEPT = 20_000  # characters of speech and on-screen text searched per video
# What people do and the picture's labels come first in what is kept: they are few words, and
# speech would otherwise crowd them out of a long video's share.
# Of the video classifier's five guesses a window, the likely ones only.
LIKELY_ACTIVITY = 0.3
_DOING = ("SELECT DISTINCT action FROM actions",
          f"SELECT DISTINCT activity FROM activities WHERE score >= {LIKELY_ACTIVITY}")
_CONTENTS = (*_DOING, "SELECT DISTINCT tag FROM tags", "SELECT DISTINCT category FROM instances",
             "SELECT text FROM speech ORDER BY t_start", "SELECT DISTINCT text FROM ocr")
# Every word is searched for in every video: 140,000 characters over 500 videos took 22 s.
# A person searches by a few words; this is ten times what a long name takes.
MAX_SEARCH_CHARS = 200


def find(entries: list[VideoEntry], text: str = "", sort: str = "newest") -> list[VideoEntry]:
    """The entries whose name or contents hold every word of `text`, sorted by `sort`. A word
    matches anywhere in a name (file names run words together: "tud" finds "mot15_TUD-Campus"),
    at the start of a word in the contents ("car" finds "cars" said, not "scarf"), and what
    people do by its stem ("ride" finds "riding")."""
    if len(text) > MAX_SEARCH_CHARS:
        raise InputError(f"The search is {len(text):,} characters long; the limit is "
                         f"{MAX_SEARCH_CHARS}: search by a few words of a name or of what a "
                         f"video holds.")
    key, reverse = SORTS.get(sort, SORTS["newest"])
    words = [(w, re.compile(r"(?<!\w)" + re.escape(w)), stem(w)) for w in text.lower().split()]
    found = [e for e in entries
             if all(w in e.name.lower() or starts.search(holds(e)) or root in does(e)
                    for w, starts, root in words)]
    return sorted(found, key=key, reverse=reverse)


def stem(word: str) -> str:
    """A verb's form without its ending, the same for 'ride', 'rides' and 'riding' ('rid') or
    'run', 'runs' and 'running' ('run'): drop -ing (leaving 2 letters or more, so 'sing'
    stays), -s or -e, then a doubled last letter. Crude, but both sides are cut the same
    way and only the actions' short fixed vocabulary is matched by it."""
    if word.endswith("ing") and len(word) >= 5:
        word = word[:-3]
    elif word.endswith("s") and len(word) > 3:
        word = word[:-1]
    if word.endswith("e") and len(word) >= 3:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]
    return word


def does(entry: VideoEntry) -> frozenset[str]:
    """The stems of the words of what people do and what is happening in a video."""
    return _does(str(entry.db_path), entry.ingested_at)


@lru_cache(maxsize=4096)
def _does(db_path: str, ingested_at: str) -> frozenset[str]:
    actions = _read(db_path, _DOING)
    return frozenset(stem(w) for action in actions for w in re.findall(r"\w+", action.lower()))


def holds(entry: VideoEntry) -> str:
    """The kinds a video tracked and the words it says and shows, lower-case, for matching."""
    return _holds(str(entry.db_path), entry.ingested_at)


@lru_cache(maxsize=4096)
def _holds(db_path: str, ingested_at: str) -> str:
    return " ".join(_read(db_path, _CONTENTS)).lower()[:_WORDS_KEPT]


def _read(db_path: str, queries: tuple[str, ...]) -> list[str]:
    """The non-empty first column of each query's rows, in order."""
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        parts = []
        for sql in queries:
            try:
                parts += [row[0] for row in db.execute(sql) if row[0]]
            except sqlite3.Error:
                continue  # a table an older ingest did not write
        return parts
    finally:
        db.close()
