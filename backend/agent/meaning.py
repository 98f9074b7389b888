"""Whether an option says what a computed value says, in other words.

Code computes values in its own words (`describe`'s directions and thirds of the picture, ISO
dates); options say the same in theirs: "to the right", "in the lower left corner", "12 March
2009". Equality misses these, and the sentence embedder cannot be trusted with them: it rates
"walks to the right" nearer the leftward phrase than the rightward one, and a corner nearer the
opposite corner than the same corner in other words (all-MiniLM-L6-v2, measured). So meaning is
compared on what the words denote: typed values by their canonical key, directions and places
on screen by the way or the third they name, distances from the camera by near or far.
"""

from __future__ import annotations

import re

from backend.agent import typed_values

# A way across or along the picture, in any of the phrasings questions use for it.
_DIRECTIONS = [
    ("rightwards", r"\bleft\s*(?:-|to|→|towards?)\s*(?:the\s+)?right\b|\b(?:to|towards?)\s+the"
                   r"\s+right\b|\brightwards?\b|\bfrom\s+the\s+left\b"),
    ("leftwards", r"\bright\s*(?:-|to|→|towards?)\s*(?:the\s+)?left\b|\b(?:to|towards?)\s+the"
                  r"\s+left\b|\bleftwards?\b|\bfrom\s+the\s+right\b"),
    ("towards", r"\btowards?\s+(?:the\s+)?(?:camera|viewer)\b|\bapproach"),
    ("away", r"\baway\s+from\s+(?:the\s+)?(?:camera|viewer)\b|\brecede"),
]
_VERTICAL = {"top": "top", "upper": "top", "bottom": "bottom", "lower": "bottom",
             "middle": "middle", "center": "middle", "centre": "middle"}
_HORIZONTAL = {"left": "left", "right": "right", "middle": "centre", "center": "centre",
               "centre": "centre"}


def ways(text: str) -> list[str]:
    """Every way across or along the picture the text names ('rightwards', 'leftwards',
    'towards', 'away')."""
    return [way for way, pattern in _DIRECTIONS if re.search(pattern, text, re.I)]


def direction(text: str) -> str | None:
    """The one way across or along the picture the text names, or None."""
    named = ways(text)
    return named[0] if len(named) == 1 else None


def place(text: str) -> tuple[str, str] | None:
    """(vertical, horizontal) third a short place phrase names ('lower left corner' ->
    ('bottom', 'left'), 'centre' -> ('middle', 'centre')); a side names one of them, the other
    '' for any ('on the left' -> ('', 'left'), 'at the top' -> ('top', '')); None for anything
    else."""
    words = re.findall(r"[a-z]+", text.lower())
    words = [w for w in words if w not in ("the", "in", "at", "on", "of", "corner", "side",
                                           "part", "screen", "frame", "picture", "hand", "half")]
    if words in (["centre"], ["center"], ["middle"]):
        return "middle", "centre"
    if len(words) == 1 and words[0] in ("left", "right"):
        return "", words[0]
    if len(words) == 1 and words[0] in ("top", "upper", "bottom", "lower"):
        return _VERTICAL[words[0]], ""
    if len(words) != 2 or words[0] not in _VERTICAL or words[1] not in _HORIZONTAL:
        return None
    return _VERTICAL[words[0]], _HORIZONTAL[words[1]]


# How far from the camera, in the phrasings options use.
_DISTANCES = [
    ("near", r"\b(?:near|close)(?: (?:to|by))? (?:the )?(?:camera|viewer|lens)\b|"
             r"\bforeground\b|\bclose[- ]?up\b|\bup close\b|\bnearby\b"),
    ("far", r"\bfar (?:away|off|from (?:the )?(?:camera|viewer|lens))\b|\bin the (?:far )?"
            r"distance\b|\bbackground\b|\bdistant\b"),
    ("midway", r"\bmiddle distance\b|\bmid-?ground\b|\bmidway\b"),
]
_SIDES = re.compile(r"\b(?:left|right|top|bottom|upper|lower)\b", re.I)


def distance(text: str) -> str | None:
    """How far from the camera a short phrase says ('near', 'midway', 'far'), or None; None
    too where it also names a side ('in the foreground on the left'), which a distance alone
    cannot decide."""
    named = [d for d, pattern in _DISTANCES if re.search(pattern, text, re.I)]
    return named[0] if len(named) == 1 and not _SIDES.search(text) else None


# Whether a thing moves or keeps still, in the phrasings questions and options use. "Still"
# alone is stillness only where it ends a phrase ("is the car still?"), not "still there" or
# "still walking"; "not moving" is still, so stillness is read first.
_STILL = re.compile(r"\b(?:parked|stationary|motionless|immobile|stopped|at rest|not (?:moving|in "
                    r"motion)|(?:stand|stands|standing|stay|stays|staying|keep|keeps|keeping|sit|"
                    r"sits|sitting) (?:still|put|in place)|still(?=\s*(?:$|[?.,!;]|or\b|and\b)))",
                    re.I)
_MOVING = re.compile(r"\b(?:mov(?:e|es|ed|ing)|in motion|on the move|driv(?:e|es|ing|en)|"
                     r"travel(?:s|led|ling|ing)?|run(?:s|ning)?|walk(?:s|ing)?|fl(?:y|ies|ying)|"
                     r"roll(?:s|ing)?)\b", re.I)


def motions(text: str) -> set[str]:
    """Whether the text says a thing moves or keeps still: {'moving'}, {'still'}, both where it
    names both ("moving or parked"), or none."""
    named = {"still"} if _STILL.search(text) else set()
    return named | ({"moving"} if _MOVING.search(_STILL.sub(" ", text)) else set())


def motion(text: str) -> str | None:
    """The one state the text says ('moving' or 'still'), or None."""
    named = motions(text)
    return named.pop() if len(named) == 1 else None


def in_place(third: tuple[str, str], named: tuple[str, str]) -> bool:
    """Whether a third of the picture lies in the place an option names (a side: any third
    along it)."""
    return all(want in ("", got) for want, got in zip(named, third))


def meanings(text: str) -> set:
    kinds = {("timecode" if v.kind == "clock time" else v.kind, key)
             for v in typed_values.find(text) for key in (v.key, *v.also)}
    if way := direction(text):
        kinds.add(("direction", way))
    if where := place(text):
        kinds.add(("place", where))
    if far := distance(text):
        kinds.add(("distance", far))
    return kinds


def option_meaning(value: str, options: list[str]) -> int | None:
    """The one option that says what `value` says in other words; None when none or several
    do, or the value names nothing this module reads."""
    wanted = meanings(value)
    if not wanted:
        return None
    matches = [i for i, option in enumerate(options) if wanted & meanings(option)]
    return matches[0] if len(matches) == 1 else None
