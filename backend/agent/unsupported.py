"""Whether anything a video holds speaks to any option of a question: else no search can help.

On the held-out questions, answers whose basis was the model's reading took 2 to 12 LLM calls
and were right 2 of 16: where no table holds a word of any option, the planner searched tool
after tool for what was never recorded. Here code tells such a question by what the tables
hold: an option that is a number, a time, a place or a way on screen, a yes or no, a colour,
or a kind of thing the video holds (or none of a kind) is something the typed queries
compute; one whose words are said, shown on screen, or linked (WordNet) to what people were
seen doing or what the picture shows, is something a tool can read. When no option is any of
these, one reading of the video's digest chooses, and the answer says it rests on that alone
(`planner`'s basis 'unsupported').
"""

from __future__ import annotations

import re

from backend import kinds
from backend.agent import activity_queries, meaning, option_match, typed_values
from backend.agent.video_tables import Target, VideoTables
from models.keywords import stopwords
from models.motion import CATEGORY as MOVING

_YES_NO = re.compile(r"^\s*(?:yes|no|true|false)\b", re.I)
_NUMBER = re.compile(r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                     r"twelve|once|twice|none|never|always)\b", re.I)
_WORD = re.compile(r"[a-z]{3,}")


def _computed_kind(option: str, tracked: set[str]) -> bool:
    """An option that is a value typed queries compute, whatever this video holds, or that
    names a kind of thing this video holds (`tracked`)."""
    return bool(_YES_NO.search(option) or _NUMBER.search(option) or meaning.direction(option)
                or meaning.place(option) or typed_values.find(option)
                or _kinds_held(option, tracked)
                or any(w in option_match.COLOUR_WORDS for w in _WORD.findall(option.lower())))


def _kinds_held(option: str, tracked: set[str]) -> bool:
    """Whether an option naming kinds of things can be supported here: the empty set ('no
    vehicles') is computed either way; otherwise some kind it names must have been tracked, or
    be one the unnamed moving things may be. 'Playing basketball' where no ball was seen is
    not supported by the kinds tracked: a rowing clip whose classifier saw canoeing searched
    six calls for it and found nothing."""
    read = option_match.option_kinds(option)
    if read is None:
        return False
    named, empty = read
    if empty:
        return True
    wanted = option_match.scope_of(named)
    if MOVING in tracked and wanted & kinds.MOVING:
        return True
    return any(d in tracked for k in wanted for d in kinds.detected_as(k))


def _said_or_shown(tables: VideoTables) -> set[str]:
    words = set()
    for sql in ("SELECT text FROM speech LIMIT 400", "SELECT DISTINCT text FROM ocr LIMIT 400"):
        for r in tables.rows(sql):
            words |= set(_WORD.findall((r["text"] or "").lower()))
    return words


def speaks_to(tables: VideoTables, options: list[str]) -> bool:
    """Whether some option is a computed kind of value, or something the video's speech,
    text on screen, actions, tags or picture facts can tell."""
    if any(_computed_kind(o, tables.tracked) for o in options):
        return True
    heard = _said_or_shown(tables)
    stop = stopwords()
    if any(w in heard and w not in stop for o in options for w in _WORD.findall(o.lower())):
        return True
    if not activity_queries.has(tables, "actions"):
        return True  # an older ingest: what people do was never read, so it cannot be ruled out
    shown = activity_queries.activity(tables, Target(None, None, "object"), None, "").typed
    decision = option_match.decide(shown, options)
    return bool(decision and decision.scores and max(decision.scores.values()) > 0)
