"""Whether the model's free answer to an open question is taken as it stands, and what code
answers in its place where it is not: the planner asks once more with the reason, then gives
code's value, account or quoted words (`said_by_code`)."""

from __future__ import annotations

import re

from backend.agent import activity_queries
from backend.agent.options import misses_value
from backend.agent.search_tree import Node
from backend.agent.tools import unquoted_numbers


def refused(answer: str, question: str, context: str, parent: Node,
            path: list[Node]) -> str | None:
    """Why a free answer is not taken as it stands: a number that neither the question nor an
    observation holds (a reformat or a guess), a computed value it does not say (a 1.5B model
    told "at a middle distance from the camera" as "2 units away", and memory learned it), the
    question said back, none of the words read or said that it rests on, or, of a numbered
    person, none of what they were seen doing; None when none of these."""
    sources = "\n".join([question, context, *(n.observation for n in path)])
    if unquoted := unquoted_numbers(answer, sources):
        return f"whose {', '.join(unquoted)} is in no observation"
    if parent.support == "computed" and misses_value(answer, parent.value):
        return f"which does not say the computed value '{parent.value}'"
    said = re.findall(r"\w+", answer.lower())
    if said == re.findall(r"\w+", question.lower()):
        return "which repeats the question"
    doing = parent.typed.get("activities", {})
    if doing.get("person") is not None and doing.get("done") and \
            not set(doing["done"]) & activity_queries.named_actions(answer).union(
                *map(activity_queries.named_actions, said)):
        # The whole picture's activity (the video classifier's) is not what a single tracked
        # person does: a passer-by seen standing for a moment was told as doing the street's
        # activity.
        # Word by word too: WordNet reads "stands still" as one verb, not standing.
        return (f"which names none of what #{doing['person']} was seen doing "
                f"({', '.join(doing['done'][:4])})")
    if (texts := parent.typed.get("texts")) and not _quotes(said, texts, question):
        return f"which quotes none of the words read or said (such as \"{texts[0]}\")"
    return None


def said_by_code(parent: Node) -> str:
    """What code can answer with in place of a refused free answer: the computed value, else
    its account of who did what, else the words read on screen or said that the step found
    ('' for none)."""
    if parent.support == "computed" and parent.value:
        return parent.value
    if account := parent.typed.get("activities", {}).get("account"):
        return account
    if texts := parent.typed.get("texts"):
        where = "read on screen" if "places" in parent.typed else "said"
        return f"The words {where}: " + ", ".join(f'"{t}"' for t in texts[:3]) + \
            (f" ({len(texts)} in all)." if len(texts) > 3 else ".")
    return ""


def _quotes(said: list[str], texts: list[str], question: str) -> bool:
    """Whether an answer's own words (not the question's, nor a short function word) include
    one of the texts read on screen or said: "the sign has text written on it" quotes none."""
    own = set(said) - set(re.findall(r"\w+", question.lower())) - _LIGHT
    return bool(own & {w for t in texts for w in re.findall(r"\w+", t.lower())})


_LIGHT = frozenset("a an the is are was were it its on in at of to and or by with has have "
                   "says said reads shown written text".split())
