"""Which option an answer or a computed value names: by its number, letter or text; by the
same words (number words are numbers); by the nearest number in the same unit; and the options
as the planner's answer grammar spells them. Options against kinds, colours and words seen:
`option_match`.
"""

from __future__ import annotations

import re

from backend import kinds
from backend.agent import meaning



def choose_option(text: str, options: list[str]) -> int | None:
    """The option an answer names: its number, its letter, or its text."""
    cleaned = text.strip().lower().rstrip(".")
    number = re.fullmatch(r"(?:option\s*)?\(?(\d+)\)?(?:[.):].*)?", cleaned)
    if number and int(number.group(1)) < len(options):
        return int(number.group(1))
    letter = re.fullmatch(r"(?:option\s*)?\(?([a-e])\)?(?:[.):].*)?", cleaned)
    if letter and "abcde".index(letter.group(1)) < len(options):
        return "abcde".index(letter.group(1))
    lowered = [o.strip().lower() for o in options]
    if cleaned in lowered:
        return lowered.index(cleaned)
    contained = [i for i, o in enumerate(lowered) if o and re.search(rf"\b{re.escape(o)}\b", cleaned)]
    if len(contained) == 1:
        return contained[0]
    words = set(re.findall(r"\w+", cleaned))
    overlaps = [len(words & set(re.findall(r"\w+", o))) / max(1, len(set(re.findall(r"\w+", o))))
                for o in lowered]
    best = max(range(len(options)), key=lambda i: overlaps[i])
    return best if overlaps[best] >= 0.6 and overlaps.count(overlaps[best]) == 1 else None


_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def _normalised(text: str) -> str:
    words = re.findall(r"[\w']+", text.lower())
    words = [_NUMBER_WORDS.get(w, w) for w in words if w not in ("a", "an", "the")]
    return " ".join(words)


def option_for_value(value: str, options: list[str]) -> int | None:
    """The one option that says exactly what a tool computed ('3' and 'three', 'an umbrella'
    and 'Umbrella'), or None when none or several do."""
    if not value:
        return None
    wanted = _normalised(value)
    matches = [i for i, o in enumerate(options) if _normalised(o) == wanted]
    return matches[0] if len(matches) == 1 else None


_NONE = re.compile(r"\b(?:no|none|nobody|nothing|no one|zero)\b", re.I)


def misses_value(answer: str, value: str) -> bool:
    """Whether a free answer fails to say a computed value that code can compare: a number
    ('3' as 'three'; 0 as 'no one', 'nothing'), kinds of things (one of them named: 'dogs'
    for 'dog, horse'), or a place, way, distance or date read by `meaning`, in a run of up to
    five of the answer's words ('near the camera' as 'close to the lens'). Other values (a
    colour list, a sentence) are not judged: False."""
    number = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:s|seconds?)?\s*", value or "")
    if number:
        said = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", answer)}
        said |= {float(_NUMBER_WORDS[w]) for w in re.findall(r"[a-z]+", answer.lower())
                 if w in _NUMBER_WORDS}
        wanted = float(number.group(1))
        return wanted not in said and not (wanted == 0 and _NONE.search(answer))
    listed = [part.strip() for part in (value or "").split(",")]
    if listed != [""] and all(kinds.named(part) == [part] for part in listed):
        # A list of kinds and nothing else ('dog', 'car, truck'; not 'left of the car'):
        # said where the answer names one of them.
        return not set(listed) & set(kinds.named(answer))
    wanted = meaning.meanings(value or "")
    if not wanted:
        return False
    words = answer.split()
    return not any(wanted & meaning.meanings(" ".join(words[i:i + n]))
                   for n in range(1, 6) for i in range(len(words) - n + 1))


def _number_and_unit(text: str) -> tuple[float, str] | None:
    """'5' -> (5, ''), 'five people' -> (5, 'people'), '12.5 s' -> (12.5, 's'); None unless
    the text holds exactly one number."""
    words = [_NUMBER_WORDS.get(w, w) for w in re.findall(r"\d+(?:\.\d+)?|[a-z']+", text.lower())
             if w not in ("a", "an", "the")]
    numbers = [i for i, w in enumerate(words) if w[0].isdigit()]
    if len(numbers) != 1:
        return None
    return float(words[numbers[0]]), " ".join(w for i, w in enumerate(words) if i != numbers[0])


# Units of time: a time and a plain number (a count) are never the same kind of value.
_TIMES = {"s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes"}


def nearest_options(value: str, options: list[str]) -> list[int]:
    """The options whose numbers are nearest a computed number that no option states (two when
    it lies halfway between them), where every option is a number in the same unit as the
    value's (or the value has none, and the options are no times); [] when that is not so."""
    got = _number_and_unit(value)
    offered = [_number_and_unit(o) for o in options]
    if got is None or any(o is None for o in offered) or len({o[1] for o in offered}) != 1:
        return []
    unit = offered[0][1]
    if got[1] != unit and (got[1] or unit in _TIMES):
        return []
    distances = [abs(number - got[0]) for number, _ in offered]
    return [i for i, d in enumerate(distances) if d == min(distances)]


def nearest_option(value: str, options: list[str]) -> int | None:
    """The one option nearest a computed number (`nearest_options`), None unless there is one."""
    nearest = nearest_options(value, options)
    return nearest[0] if len(nearest) == 1 else None


def option_labels(options: list[str]) -> list[str]:
    """Options as the grammar's enum: their texts, made distinct where two are written alike."""
    labels: list[str] = []
    for option in options:
        label = option.strip() or "(empty)"
        while label in labels:
            label += " (again)"
        labels.append(label)
    return labels
