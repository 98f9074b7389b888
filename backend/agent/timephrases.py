"""Time phrases resolved against a video's duration, by code: "at the very start", "1:10",
"70 seconds", "between 10 and 20 s", "the last 5 seconds", "the end".

A small model asked for a number of seconds writes 1 for "the first frame" or 110 for "1:10";
here it only copies the phrase, and the arithmetic is done once, the same way every time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = r"\d+(?:\.\d+)?"
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?"
_SECONDS_UNIT = r"(?:s|sec|secs|second|seconds)\b"
_MINUTES_UNIT = r"(?:m|min|mins|minute|minutes)\b"
# One time value: a clock, minutes and seconds, minutes, or seconds.
_VALUE = (rf"(?:{_CLOCK}|{_NUMBER}\s*{_MINUTES_UNIT}(?:\s*(?:and\s*)?{_NUMBER}\s*{_SECONDS_UNIT})?"
          rf"|{_NUMBER}\s*{_SECONDS_UNIT})")
# In an interval the unit is often said once, at the end: "between 10 and 20 seconds".
_BARE_OR_VALUE = rf"(?:{_VALUE}|{_NUMBER})"

_START = re.compile(r"\b(?:first frame|very (?:start|beginning)|the (?:start|beginning|outset)|"
                    r"at first|opening|start of the (?:video|clip)|beginning of the (?:video|clip))\b")
_END = re.compile(r"\b(?:last frame|final frame|very end|the end|end of the (?:video|clip)|"
                  r"at last|finally|last moment)\b")
_MIDDLE = re.compile(r"\b(?:the middle|halfway|half way|midway|mid-point|midpoint)\b")


@dataclass(frozen=True)
class Span:
    """A moment (start == end) or an interval of the video, in seconds, and the phrase it came from."""

    start: float
    end: float
    phrase: str

    @property
    def is_moment(self) -> bool:
        return self.start == self.end

    def __str__(self) -> str:
        return f"{self.start:.1f} s" if self.is_moment else f"{self.start:.1f}-{self.end:.1f} s"


def seconds(value: str) -> float | None:
    """One time value in seconds: '1:10' -> 70, '2 min 5 s' -> 125, '70 seconds' -> 70."""
    value = value.strip().lower()
    if re.fullmatch(_CLOCK, value):
        parts = [float(p) for p in value.split(":")]
        total = 0.0
        for p in parts:
            total = total * 60 + p
        return total
    minutes = re.match(rf"({_NUMBER})\s*{_MINUTES_UNIT}", value)
    secs = re.search(rf"({_NUMBER})\s*{_SECONDS_UNIT}", value)
    if minutes or secs:
        return (float(minutes.group(1)) * 60 if minutes else 0.0) + (float(secs.group(1)) if secs else 0.0)
    if re.fullmatch(_NUMBER, value):
        return float(value)
    return None


def resolve(text: str, duration: float, bare_number: bool = False) -> Span | None:
    """The time a phrase names, clamped to [0, duration]; None if it names none.

    bare_number: a lone number counts as seconds (for a field that holds only a time; in a
    question a lone number is more often a count or an id).
    """
    said = " ".join(text.lower().split())
    if not said:
        return None

    def clamp(t: float) -> float:
        return round(min(max(t, 0.0), duration), 2)

    interval = (re.search(rf"\b(?:between|from)\s+({_BARE_OR_VALUE})\s+(?:and|to|until|till)\s+({_VALUE})", said)
                or re.search(rf"({_BARE_OR_VALUE})\s*(?:-|–|to)\s*({_VALUE})", said))
    if interval:
        unit = re.search(rf"{_MINUTES_UNIT}|{_SECONDS_UNIT}", interval.group(2))
        first = interval.group(1)
        if re.fullmatch(_NUMBER, first.strip()) and unit and not re.fullmatch(_CLOCK, interval.group(2).strip()):
            first = f"{first} {unit.group(0)}"  # "10 and 20 minutes": 10 minutes
        a, b = seconds(first), seconds(interval.group(2))
        if a is not None and b is not None:
            a, b = sorted((clamp(a), clamp(b)))
            return Span(a, b, interval.group(0))
    edge = re.search(rf"\b(first|last|final|opening)\s+({_NUMBER}\s*(?:{_SECONDS_UNIT}|{_MINUTES_UNIT})|"
                     rf"(?:few|couple of)\s+{_SECONDS_UNIT}|half)", said)
    if edge:
        amount = edge.group(2)
        length = duration / 2 if amount == "half" else 3.0 if amount.startswith(("few", "couple")) \
            else seconds(amount)
        if edge.group(1) in ("first", "opening"):
            return Span(0.0, clamp(length), edge.group(0))
        return Span(clamp(duration - length), clamp(duration), edge.group(0))
    if re.search(r"\bsecond half\b", said):
        return Span(clamp(duration / 2), clamp(duration), "second half")
    # "After 10 seconds" is from then to the end, "until 0:10" from the start to then: what
    # happens after a time is more than the moment at it.
    bound = re.search(rf"\b(after|since|from|before|until|till|up to)\s+({_VALUE})", said)
    if bound and (at := seconds(bound.group(2))) is not None:
        if bound.group(1) in ("after", "since", "from"):
            return Span(clamp(at), clamp(duration), bound.group(0))
        return Span(0.0, clamp(at), bound.group(0))
    value = re.search(_VALUE, said)
    if value:
        found = seconds(value.group(0))
        if found is not None:
            return Span(clamp(found), clamp(found), value.group(0))
    for pattern, t in ((_START, 0.0), (_END, duration), (_MIDDLE, duration / 2)):
        named = pattern.search(said)
        if named:
            return Span(clamp(t), clamp(t), named.group(0))
    if bare_number and re.fullmatch(_NUMBER, said):
        return Span(clamp(float(said)), clamp(float(said)), said)
    for word, t in (("start", 0.0), ("beginning", 0.0), ("end", duration), ("middle", duration / 2)):
        if re.fullmatch(rf"(?:the\s+)?(?:very\s+)?{word}", said):
            return Span(clamp(t), clamp(t), said)
    return None
