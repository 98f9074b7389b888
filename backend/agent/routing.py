"""Questions reach the evidence they name, by code, before the model reads anything.

A question about what is said must read speech, one about what is written must read on-screen
text, one about a colour must read the measured colours. Left to a 1.5B planner, such questions
were answered from whichever tool it called first (what a speaker says, answered from text on
screen). Here the question's own words choose the typed query of its first step; the planner
goes on from that observation as from any other (`GivenStep`).
"""

from __future__ import annotations

import re

from backend.agent import queries
from backend.agent.planner import GivenStep
from backend.agent.tools import observed

# (words in the question, operation, sub-task tool that hosts it), the first match wins: a
# question about a sign "saying" something is about text, so text comes before speech.
_ROUTES = (
    (r"\b(written|writes?|writing|text|sign|signs|caption|subtitles?|title|banner|label|"
     r"on (?:the )?screen|displayed|printed)\b", "screen_text", "What"),
    (r"\b(say|says|said|saying|speak|speaks|spoke|spoken|speaker|talk|talks|talking|mention|"
     r"mentions|mentioned|words?|hear|heard|voice|narrator)\b", "speech", "What"),
    (r"\b(colou?r|colou?red|wear|wears|wearing|dressed)\b", "appearance", "What"),
)
_PEOPLE = re.compile(r"\b(person|people|man|men|woman|women|boy|girl|child|children|someone|"
                     r"pedestrian|pedestrians|he|she|they|speaker)\b", re.IGNORECASE)


_QUOTED = re.compile(r"(?:^|\s)[\"“‘']([^\"”’']{1,60})[\"”’'](?=\s|$|[?.,!])"
                     r"|\bthe (?:word|phrase|name)s? (\w+)", re.I)


def quoted_words(question: str) -> str:
    """The words a question quotes ('when is "good morning" said', 'the word welcome'), or ''."""
    match = _QUOTED.search(question)
    return (match.group(1) or match.group(2)).strip() if match else ""


def route(question: str) -> tuple[str, str] | None:
    """(operation, tool) the question's words call for, or None."""
    for pattern, operation, tool in _ROUTES:
        if re.search(pattern, question, re.IGNORECASE):
            return operation, tool
    return None


def first_step(question: str, tables: queries.VideoTables) -> GivenStep | None:
    """The typed query the question names, run on this video as the first step; None when the
    question names no kind of evidence or the query found nothing to show."""
    chosen = route(question)
    if chosen is None:
        return None
    operation, tool = chosen
    target = "person" if operation == "appearance" and _PEOPLE.search(question) else ""
    query = queries.TypedQuery(operation=operation, target=target, time="", until="",
                               words=quoted_words(question) if operation != "appearance" else "")
    result = queries.run(query, question, tables)
    if result.support == "none":
        return None
    return GivenStep(tool=tool, tool_input=question,
                     thought=f"the question asks about {_WHAT[operation]}, so {_WHAT[operation]} "
                             "is read first",
                     observation=observed(result, query), replayed=None)


_WHAT = {"screen_text": "on-screen text", "speech": "speech", "appearance": "measured colours"}
