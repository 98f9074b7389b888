"""Whether anything ingest observed could have seen the kind of thing an answer names.

A multiple-choice pick that names a dog, when no dog was tracked (the detectors found none, or
could not have), no moving object was tracked, and no description, caption, on-screen text or
speech ever mentions a dog, is a guess from the options alone: `flag_unseen` says so and makes
it low, whatever the planner's reading of the evidence was. With a detector of 80 kinds, what it
could report says little; what it found says what is there.
"""

from __future__ import annotations

from dataclasses import replace

from backend import kinds
from backend.answer import Confidence
from models.motion import CATEGORY as MOVING_OBJECT

# Where a kind may be named in words: descriptions and captions, text read on screen, speech.
_TEXT_COLUMNS = (("timeline", "description"), ("ocr", "text"), ("speech", "text"))


def unseen(option: str, tables) -> list[str]:
    """The kinds `option` names that nothing the video's memory holds covers."""
    named = kinds.named(option)
    if not named:
        return []
    tracked = tables.tracked

    def covered(kind: str) -> bool:
        return (any(k in tracked for k in kinds.detected_as(kind))
                or (kind in kinds.MOVING and MOVING_OBJECT in tracked)
                or _mentioned(tables, kinds.words_for(kind)))

    return [kind for kind in named if not covered(kind)]


def _mentioned(tables, words: list[str]) -> bool:
    for table, column in _TEXT_COLUMNS:
        where = " OR ".join(f"lower({column}) LIKE '%{w}%'" for w in words)
        if tables.rows(f"SELECT 1 AS found FROM {table} WHERE {where} LIMIT 1"):
            return True
    return False


def flag_unseen(confidence: Confidence, option: str, tables) -> Confidence:
    """`confidence`, made low and saying why when the chosen option names an unseen kind."""
    missing = unseen(option, tables)
    if not missing:
        return confidence
    names = ", ".join(missing)
    return replace(confidence, level="low",
                   explanation=f"{confidence.explanation} Not supported by evidence: nothing "
                               f"this video's memory holds (detector classes, moving objects, "
                               f"descriptions, on-screen text, speech) names {names}.")
