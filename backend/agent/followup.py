"""A follow-up question made to stand alone, and nothing more: the question as asked unless it
refers to an earlier turn, and then the model's rewrite only if it is still that question.

A small model asked to "rewrite" a question with the conversation in view will sometimes answer
it instead: after "what happens in this video?", "What is the woman doing?" came back as "The
woman is moving across the picture." and was answered with a list of tracks. So code decides when
to ask and whether to take the reply.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

from pydantic import BaseModel, Field

from backend import kinds
from backend.agent import prompts
from models.llm import LLMError, Reply

QUESTION_WORDS = ("what", "which", "who", "whom", "whose", "when", "where", "why", "how")
AUXILIARIES = frozenset({"is", "are", "was", "were", "am", "do", "does", "did", "can", "could",
                         "will", "would", "should", "shall", "may", "might", "must", "has",
                         "have", "had"})
# Words that point back at something said before.
REFERRING = frozenset({"it", "its", "he", "him", "his", "she", "her", "hers", "they", "them",
                       "their", "theirs", "that", "this", "those", "these", "there", "then",
                       "again", "also", "too", "same"})
# "this video" is the video itself, which every question is about, not an earlier turn.
_THE_VIDEO = frozenset({"video", "clip", "footage", "film", "movie", "recording"})
_BE = frozenset({"is", "are", "was", "were", "s"})
# A question that opens with these leaves out what it is about ("and the car?").
_ELLIPSIS_OPENERS = frozenset({"and", "or", "but"})
_ELLIPSIS_PHRASES = frozenset({"what about", "how about"})
# Words any rewrite may add: they join the referent to the question and say nothing new
# ("how many people are there in the video?").
_JOINING = frozenset({"the", "a", "an", "any", "of", "in", "on", "at", "to", "with", "from",
                      "by", "for", "and", "is", "are", "was", "were", "does", "do", "did", "s",
                      "there", "this", "that", "it", "video"})


class Standalone(BaseModel):
    question: str = Field(max_length=300)


def standalone(question: str, turns: list[tuple[str, str]],
               complete: Callable[..., Reply]) -> str:
    """`question` rewritten to stand alone where it refers to an earlier turn of `turns`
    (question, answer pairs, oldest first); otherwise, or when the rewrite is refused or the
    model fails, the question as asked. `complete` is one LLM call (ToolContext.complete)."""
    if not turns or not refers_back(question):
        return question
    try:
        rewritten = complete(prompts.standalone_messages(turns, question),
                             response_model=Standalone, max_tokens=80).parsed.question.strip()
    except LLMError:
        return question
    return rewritten if rewritten and accepted(rewritten, question, turns) else question


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def refers_back(question: str) -> bool:
    """Whether the question holds a reference only the conversation can resolve."""
    said = words(question)
    if (said and said[0] in _ELLIPSIS_OPENERS) or " ".join(said[:2]) in _ELLIPSIS_PHRASES:
        return True
    for k, word in enumerate(said):
        after = said[k + 1] if k + 1 < len(said) else ""
        before = said[k - 1] if k else ""
        if word not in REFERRING or (word in ("this", "that") and after in _THE_VIDEO):
            continue
        if word == "there" and (before in _BE or after in _BE):  # "is there a car?"
            continue
        return True
    return False


def is_question(text: str) -> bool:
    said = words(text)
    return text.rstrip().endswith("?") or bool(said) and (said[0] in QUESTION_WORDS
                                                          or said[0] in AUXILIARIES)


def accepted(rewrite: str, question: str, turns: list[tuple[str, str]]) -> bool:
    """Whether `rewrite` is still the question asked, with only its reference resolved.

    It must be a question where the original is one, and keep the original's question word.
    It may bring in a word only if a question of the conversation used it, or if an answer used
    it to name a thing (a kind of object, or an id such as the 3 of "person 3"): the questions
    hold the person's own words for what they mean, while the rest of an answer is its account
    of the video, and a rewrite that takes those words up has started answering.
    """
    if is_question(question) and not is_question(rewrite):
        return False
    said = words(rewrite)
    asked_with = next((w for w in words(question) if w in QUESTION_WORDS), None)
    if asked_with and asked_with not in said:
        return False
    allowed = set(words(question)) | _JOINING
    for earlier, answer in turns:
        allowed |= set(words(earlier))
        allowed |= {w for w in words(answer) if w.isdigit() or w in _naming()}
    return set(said) <= allowed


@lru_cache(maxsize=1)
def _naming() -> frozenset[str]:
    """Every single word that names a kind of thing ('person', 'woman', 'car', 'teddy')."""
    return frozenset(w for phrase in kinds.words() for w in phrase.split()) | {"object", "thing"}
