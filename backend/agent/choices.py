"""The options a question without options names itself: "is the person sitting or standing?",
"is the film in colour or black and white?", "which way does the bus go, left or right?".

Asked open, such a question is read as a yes-or-no one (a first line "Yes: ..." answers it)
or searched tool after tool; asked with its own alternatives as options where the typed
evidence picks one (`routing.asked_choice`), code decides among them (`option_match`).
"""

from __future__ import annotations

import re

from backend.agent.video_tables import YES_NO

_ASKS_WHICH = re.compile(r"^\s*(?:what|which|who)\b", re.I)
# "Is there a dog or a cat?", "does anyone sit or lie down?", "is it raining or not?": whether
# any of them is so, a yes or a no; not a choice between them.
_ANY = re.compile(r"\b(?:there|any|anyone|anybody|anything|someone|somebody|something|ever|"
                  r"either|both|neither|whether)\b|\bor\s+not\b", re.I)
# Words that open a phrase: where the right-hand alternative opens with one, the left-hand one
# opens at its last use before "or" ("holding a cup or a phone", "on the left or on the right").
_OPENERS = {"a", "an", "the", "in", "on", "at", "to", "into", "onto", "from", "with", "by",
            "inside", "outside", "near", "under", "over", "his", "her", "their", "its", "some"}
_DETERMINERS = {"a", "an", "the", "his", "her", "their", "its", "some"}
# A subject's opening: a determiner and one word ("the person", "this video") or a pronoun.
_SUBJECT = re.compile(r"^(?:(?:the|a|an|this|that|these|those|his|her|their|its)\s+"
                      r"(?:\w+'s\s+\w+|\w+(?:\s+#?\d+)?)|it|they|he|she|you|we|there)\b", re.I)
_MOST = 4  # alternatives a question can list and still be a choice, not an inventory


def named(question: str) -> list[str]:
    """The two to four alternatives the question offers, in its order; [] for any other question
    (one with options of its own is not asked)."""
    text = question.strip().rstrip("?!. ").strip()
    if " or " not in f" {text.lower()} " or _ANY.search(text):
        return []
    if _ASKS_WHICH.match(text):
        listed = re.split(r"\s*[,:;]\s*", text, maxsplit=1)
        return _listed(listed[1]) if len(listed) == 2 else []
    if not (opened := YES_NO.match(text)):  # the auxiliary, then the subject
        return []
    rest = text[opened.end():].strip()
    subject = _SUBJECT.match(rest)
    # "is this indoors or outdoors": "this" alone may be the subject
    for predicate in (rest[subject.end():] if subject else rest, rest.split(" ", 1)[-1]):
        if alternatives := _listed(predicate.strip()):
            alternatives[0] = _first(alternatives[0], alternatives[-1])
            alternatives = _referred(alternatives)
            return alternatives if _distinct(alternatives) else []
    return []


# "On the box or under it", "inside the tent or outside it": a later alternative that ends on a
# pronoun means the thing the first one names.
_BACK = re.compile(r"\b(?:it|them)$", re.I)
_THING = re.compile(r"\b(?:the|a|an|his|her|their|its)\s+\w+$", re.I)


def _referred(alternatives: list[str]) -> list[str]:
    thing = _THING.search(alternatives[0])
    if not thing:
        return alternatives
    return [alternatives[0]] + [_BACK.sub(thing.group(0), a) for a in alternatives[1:]]


def _listed(text: str) -> list[str]:
    """'red, blue or green' -> the three; 'a cup or a phone' -> both; more than `_MOST`: []."""
    parts = [p.strip() for p in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", text, flags=re.I)]
    parts = [p for p in parts if p]
    return parts if 2 <= len(parts) <= _MOST and _distinct(parts) else []


def _distinct(parts: list[str]) -> bool:
    return len({p.lower() for p in parts}) == len(parts)


def _first(before: str, last: str) -> str:
    """The first alternative, out of all that stands before the first "or" or comma: from the
    last use of the word the last alternative opens with, or as many words as that one has."""
    words, opener = before.split(), last.split()[0].lower()
    if opener in _OPENERS:
        at = [i for i, w in enumerate(words) if w.lower() == opener]
        if not at and opener not in _DETERMINERS:  # "on the box or under it"
            at = [i for i, w in enumerate(words) if w.lower() in _OPENERS - _DETERMINERS]
        if at:
            return " ".join(words[at[-1]:])
    return " ".join(words[-len(last.split()):])
