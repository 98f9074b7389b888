"""Values in evidence that have a type: timecodes, clock times, dates, numbers with units.

On-screen text and speech hold values in many spellings: a timecode "00:01:23:12", a date
"2009-03-12" or "12.03.2009", a clock time "4:05 pm", a speed "80 km/h". Read as plain strings,
an option that says the same in other words ("12 March 2009", "one minute 23 seconds") never
equals them, and a model reading "00:01:23:12" does not know it is a running timecode. Here each
is recognised, given a canonical key (seconds, an ISO date, a number and unit) and described in
words for the observation; `meaning` compares the keys with the options'.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = {name: i + 1 for i, name in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTHS.update({name[:3]: number for name, number in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))

# Units a number on screen or in speech commonly carries, by what they measure.
_UNITS = {"km/h": "speed", "kmh": "speed", "kph": "speed", "mph": "speed", "m/s": "speed",
          "km": "distance", "m": "distance", "mi": "distance", "miles": "distance",
          "ft": "distance", "cm": "distance", "kg": "weight", "g": "weight", "lb": "weight",
          "lbs": "weight", "%": "share", "°c": "temperature", "°f": "temperature",
          "°": "angle", "c": "temperature", "f": "temperature", "fps": "frame rate",
          "s": "duration", "sec": "duration", "min": "duration", "h": "duration"}
# A year far from any recording is a misread run of digits (OCR's "0712-04-29").
_YEARS = (1900, 2099)
_UNIT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))

_PATTERNS = [
    # 00:01:23:12 or 00:01:23;12 (frames after the last separator), or 01:23:45.67
    ("timecode", re.compile(r"\b(\d{1,2}):(\d{2}):(\d{2})[:;.](\d{2})\b")),
    ("clock time", re.compile(r"\b(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?![\d:])", re.I)),
    ("date", re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")),
    ("date", re.compile(r"\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})\b")),
    ("date", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)),
    ("date", re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)),
    ("quantity", re.compile(rf"(?<![\w.])(\d+(?:[.,]\d+)?)\s*({_UNIT})(?![\w/])", re.I)),
]


@dataclass(frozen=True)
class TypedValue:
    kind: str   # "timecode", "clock time", "date", "quantity"
    text: str   # as written
    key: str    # canonical: seconds, an ISO date, or "number unit"
    words: str  # the value said plainly
    also: tuple[str, ...] = ()  # keys of other readings ('03/04/2009': day or month first)

    def describe(self) -> str:
        return f'"{self.text}" is a {self.kind} ({self.words})'


def find(text: str) -> list[TypedValue]:
    """Every typed value in the text, in order, none overlapping another."""
    found: list[tuple[int, TypedValue]] = []
    taken: list[range] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() in r or m.end() - 1 in r for r in taken):
                continue
            value = _typed(kind, m)
            if value is not None:
                found.append((m.start(), value))
                taken.append(range(m.start(), m.end()))
    return [v for _, v in sorted(found, key=lambda x: x[0])]


def _typed(kind: str, m: re.Match) -> TypedValue | None:
    text = m.group(0).strip()
    if kind == "timecode":
        h, mi, s, f = (int(g) for g in m.groups())
        if mi > 59 or s > 59:
            return None
        seconds = h * 3600 + mi * 60 + s
        return TypedValue(kind, text, f"{seconds}s", f"{_duration(seconds)}, frame {f}")
    if kind == "clock time":
        h, mi, s, half = m.group(1), m.group(2), m.group(3), (m.group(4) or "").lower()
        hour, minute, second = int(h), int(mi), int(s or 0)
        if half.startswith("p") and hour < 12:
            hour += 12
        elif half.startswith("a") and hour == 12:
            hour = 0
        if hour > 23 or minute > 59 or second > 59:
            return None
        seconds = hour * 3600 + minute * 60 + second
        return TypedValue(kind, text, f"{seconds}s", f"{hour:02d}:{minute:02d}"
                          + (f":{second:02d}" if s else "") + " on a 24-hour clock")
    if kind == "date":
        day = _date(m.groups())
        if day is None:
            return None
        words = f"{day.day} {day:%B %Y}"
        others = tuple(d.isoformat() for d in _other_readings(m.groups()) if d != day)
        if others:
            words += ", reading the day first; the order is not written"
        return TypedValue(kind, text, day.isoformat(), words, others)
    number, unit = float(m.group(1).replace(",", ".")), m.group(2).lower()
    return TypedValue(kind, text, f"{number:g} {unit}", f"a {_UNITS[unit]} of {number:g} {unit}")


def _date(groups: tuple[str, ...]) -> dt.date | None:
    day = _calendar_date(groups)
    return day if day and _YEARS[0] <= day.year <= _YEARS[1] else None


def _calendar_date(groups: tuple[str, ...]) -> dt.date | None:
    a, b, c = groups
    try:
        if a.isdigit() and len(a) == 4:
            return dt.date(int(a), int(b), int(c))
        if not a.isdigit():
            return dt.date(int(c), _MONTHS[a.lower().rstrip(".")], int(b))
        if not b.isdigit():
            return dt.date(int(c), _MONTHS[b.lower().rstrip(".")], int(a))
        year = int(c) + (2000 if len(c) == 2 else 0)
        # Day first, as most of the world writes it, unless that cannot be a date.
        first, second = int(a), int(b)
        return dt.date(year, second, first) if second <= 12 else dt.date(year, first, second)
    except (ValueError, KeyError):
        return None


def _other_readings(groups: tuple[str, ...]) -> list[dt.date]:
    """The dates an all-number date could also be: month first, or a two-digit year first
    ('17/09/07': 17 September 2007 or 7 September 2017)."""
    a, b, c = groups
    if not (a.isdigit() and b.isdigit() and c.isdigit()) or len(a) == 4:
        return []
    year = int(c) + (2000 if len(c) == 2 else 0)
    candidates = [(year, int(a), int(b))]
    if len(c) == 2:
        candidates.append((2000 + int(a), int(b), int(c)))
    readings = []
    for y, mo, d in candidates:
        try:
            readings.append(dt.date(y, mo, d))
        except ValueError:
            continue
    return readings


def _duration(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    parts = [f"{h} h" if h else "", f"{m} min" if m else "", f"{s} s" if s or not (h or m) else ""]
    return " ".join(p for p in parts if p)


def described(reads: list[tuple[str, float]]) -> str:
    """A sentence naming the typed values in texts read at times (text, seconds): each kind
    once, with an example, and "running" where a timecode or clock rises with the video."""
    by_kind: dict[str, list[tuple[float, TypedValue]]] = {}
    for text, t in reads:
        for value in find(text):
            by_kind.setdefault(value.kind, []).append((t, value))
    parts = []
    for kind, seen in by_kind.items():
        seen.sort(key=lambda x: x[0])
        (t0, first), (t1, last) = seen[0], seen[-1]
        if kind in ("timecode", "clock time") and _rises(seen):
            parts.append(f'a running {kind} that rises with the video, from "{first.text}" '
                         f'({first.words}) at {t0:.1f} s to "{last.text}" at {t1:.1f} s')
        else:
            parts.append(first.describe() + (f" (and {len(seen) - 1} more {kind}s)"
                                              if len(seen) > 1 else ""))
    return ("Typed values: " + "; ".join(parts) + ".") if parts else ""


def _rises(seen: list[tuple[float, TypedValue]]) -> bool:
    """Two or more distinct values at different times, each later one larger."""
    keys = [(t, int(v.key[:-1])) for t, v in seen]
    distinct = {k for _, k in keys}
    return len(distinct) >= 2 and all(b[1] >= a[1] for a, b in zip(keys, keys[1:]) if b[0] > a[0])
