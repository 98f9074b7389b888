"""Whether anything a video holds speaks to any option of a question: else no search can help.

On the held-out questions, answers whose basis was the model's reading took 2 to 12 LLM calls
and were right 2 of 16: where no table holds a word of any option, the planner searched tool
after tool for what was never recorded. Here code tells such a question by what the tables
hold: an option that is a number, a time, a place or a way on screen, a yes or no, a kind of
thing or a colour is something the typed queries compute; one whose words are said, shown on
screen, or linked (WordNet) to what people were seen doing or what the picture shows, is
something a tool can read. When no option is any of these, one reading of the video's digest
chooses, and the answer says it rests on that alone (`planner`'s basis 'unsupported').
"""

from __future__ import annotations

import re

from backend.agent import activity_queries, meaning, option_match, typed_values
from backend.agent.video_tables import Target, VideoTables
from models.keywords import stopwords

_YES_NO = re.compile(r"^\s*(?:yes|no|true|false)\b", re.I)
_NUMBER = re.compile(r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                     r"twelve|once|twice|none|never|always)\b", re.I)
_WORD = re.compile(r"[a-z]{3,}")


def _computed_kind(option: str) -> bool:
    """An option that is a value typed queries compute, whatever this video holds."""
    return bool(_YES_NO.search(option) or _NUMBER.search(option) or meaning.direction(option)
                or meaning.place(option) or typed_values.find(option)
                or option_match.option_kinds(option) is not None
                or any(w in option_match.COLOUR_WORDS for w in _WORD.findall(option.lower())))


def _said_or_shown(tables: VideoTables) -> set[str]:
    words = set()
    for sql in ("SELECT text FROM speech LIMIT 400", "SELECT DISTINCT text FROM ocr LIMIT 400"):
        for r in tables.rows(sql):
            words |= set(_WORD.findall((r["text"] or "").lower()))
    return words


def speaks_to(tables: VideoTables, options: list[str]) -> bool:
    """Whether some option is a computed kind of value, or something the video's speech,
    text on screen, actions, tags or picture facts can tell."""
    if any(_computed_kind(o) for o in options):
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
