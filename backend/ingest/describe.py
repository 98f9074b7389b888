"""Offline descriptions written from evidence: tracked objects and their motion, speech, text.

With no vision-language model at hand, this is what fills the time-dominant table: plain
sentences that say only what the detectors, tracker, ASR and OCR actually found. A configured
captioner (models/captioner.py) adds its caption in front of the same evidence.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from backend.ingest.actions import ACTIONS as ACTION_NAMES, POSTURES
from backend.ingest.colours import NAMES, Reading, colour_name
from backend.places import third
from models.types import Pose


@dataclass(frozen=True)
class TrackPoint:
    t: float
    cx: float  # box centre, as a fraction of the frame width
    cy: float  # box centre, as a fraction of the frame height
    h: float   # box height, as a fraction of the frame height
    pose: Pose | None = None  # only where the pose model read this frame
    w: float | None = None    # box width, as a fraction of the frame width
    # How far the whole picture has moved right by then (a panning camera), as a fraction of
    # the width: where the object went across the scene is cx less this.
    drift: float = 0.0


FACING = {"camera": "facing the camera", "away": "back to the camera",
          "side": "side-on to the camera"}


# Garments a question or caption names, and the part of `appearance` that says their colour.
GARMENTS = {
    **dict.fromkeys(("shirt", "shirts", "jacket", "jackets", "coat", "coats", "sweater",
                     "hoodie", "sweatshirt", "jersey", "jerseys", "vest", "blouse", "dress",
                     "uniform", "uniforms", "suit", "suits", "top", "tops"), "top"),
    **dict.fromkeys(("pants", "jeans", "shorts", "skirt", "trousers", "bottom", "bottoms"),
                    "bottom"),
}


def worn(looks: str, part: str) -> str:
    """The colour `appearance` gives a part ('top' or 'bottom'), or '' where it gives none."""
    found = re.search(rf"\b([a-z]+(?: [a-z]+)?) {part}\b", looks.removeprefix("person in "))
    return found.group(1).removeprefix("and ") if found else ""


# A colour is listed among a part's shares where it covers this much of it: less is a logo,
# a collar or background at the region's edge.
SHARE_FLOOR = 0.05


def colour_shares(category: str, upper: Reading | None, lower: Reading | None) -> str:
    """The names of a thing's pixels, largest share first: 'top: grey 41%, blue 30%; bottom:
    blue 55%, black 30%' for a person, 'red 52%, white 20%' for anything else."""
    def listed(reading: Reading) -> str:
        return ", ".join(f"{NAMES[k]} {reading.shares[k]:.0%}"
                         for k in np.argsort(-reading.shares, kind="stable")
                         if reading.shares[k] >= SHARE_FLOOR)
    if category == "person":
        return "; ".join(f"{part}: {listed(r)}" for r, part in ((upper, "top"), (lower, "bottom"))
                         if r is not None)
    return listed(upper) if upper is not None else ""


def shares(text: str, part: str = "") -> dict[str, float]:
    """The shares `colour_shares` wrote: of a person's one part ('top', 'bottom'), or of the
    whole (both parts, each name's larger share)."""
    found: dict[str, float] = {}
    for chunk in (text or "").split(";"):
        label, _, listed = chunk.rpartition(":")
        if part and label.strip() != part:
            continue
        for name, share in re.findall(r"([a-z]+) (\d+)%", listed):
            found[name] = max(found.get(name, 0.0), int(share) / 100)
    return found


def appearance(category: str, upper_rgb: np.ndarray | None, lower_rgb: np.ndarray | None) -> str:
    """E.g. 'person in dark grey top and blue bottom', from the colours of the body parts
    (`colours.person_colours`) or of an object's middle."""
    if category == "person" and (upper_rgb is not None or lower_rgb is not None):
        worn = [f"{colour_name(rgb)} {part}" for rgb, part in ((upper_rgb, "top"), (lower_rgb, "bottom"))
                if rgb is not None]
        return f"person in {' and '.join(worn)}"
    if upper_rgb is None or lower_rgb is None:
        return category
    upper, lower = colour_name(upper_rgb), colour_name(lower_rgb)
    return f"{upper} {category}" if upper == lower else f"{upper} and {lower} {category}"


def moving_object(upper_rgb: np.ndarray | None, lower_rgb: np.ndarray | None,
                  area: float, aspect: float) -> str:
    """A moving object in measurements only, e.g. 'large white moving object, wider than tall':
    area is the median box area as a share of the frame, aspect the median width / height."""
    colours = [] if upper_rgb is None or lower_rgb is None else \
        list(dict.fromkeys([colour_name(upper_rgb), colour_name(lower_rgb)]))
    shape = "wider than tall" if aspect > 1.3 else "taller than wide" if aspect < 0.77 else "about as wide as tall"
    return f"{size(area)} {' and '.join(colours) + ' ' if colours else ''}moving object, {shape}"


def size(area: float) -> str:
    """How big an object looks, from its box's share of the frame."""
    return "small" if area < 0.005 else "medium" if area < 0.05 else "large"


def path(points: list[TrackPoint]) -> str:
    """Where a track enters and leaves the frame, e.g. 'from the bottom left to the top right'."""
    start, end = where(points[0]), where(points[-1])
    return f"at the {start}" if start == end else f"from the {start} to the {end}"


def motion(points: list[TrackPoint]) -> str:
    """How a track moves over its life: direction across the frame, towards or away, or still."""
    if len(points) < 2:
        return "seen briefly"
    # The median of each half of the track against the other's, not its first and last box: a
    # box that loses a person's legs behind a car for a frame would read as walking away.
    # Against MOT truth over 2 s spans, the tracked direction agreed 93 % of the time so, 85 %
    # from the end boxes (tuning half of `bench appearance`; thirds 89 %, a line fit 87 %).
    half = len(points) // 2
    first, last = _median_point(points[:half]), _median_point(points[-half:])
    # The two medians lie about half the track's run apart: twice their distance is the run
    # the thresholds below were set for (walkers far from the camera read as standing else).
    dx, dy = 2 * (last.cx - first.cx), 2 * (last.cy - first.cy)
    scale = last.h / first.h if first.h > 0 else 1.0
    # Across the frame: a tenth of it, or the object's own width where that is less. Someone far
    # from the camera walks a few of their own widths, a small share of the picture.
    widths = [p.w for p in points if p.w]
    across = min(0.1, float(np.mean(widths))) if widths else 0.1
    phrases = []
    if abs(dx) >= across and abs(dx) >= abs(dy):
        phrases.append("moves left to right" if dx > 0 else "moves right to left")
    elif abs(dy) >= 0.1:
        phrases.append("moves down the frame" if dy > 0 else "moves up the frame")
    if scale >= 1.3:
        phrases.append("comes towards the camera")
    elif scale <= 0.75:
        phrases.append("goes away from the camera")
    if not phrases:
        return "stays in place"
    return " and ".join(phrases)


def _median_point(points: list[TrackPoint]) -> TrackPoint:
    return TrackPoint(points[0].t, float(np.median([p.cx - p.drift for p in points])),
                      float(np.median([p.cy for p in points])),
                      float(np.median([p.h for p in points])))


# `motion`'s phrases without a way to go, in a question's words; a way to go ("moves ...",
# "comes ...", "goes ...") is said without its verb.
_STILL_WORDS = {"stays in place": "stay in place", "seen briefly": "seen too briefly to tell"}


def direction_words(phrase: str) -> str:
    """One of `motion`'s phrases in the shorter words a question uses ("which way do they go")."""
    phrase = (phrase or "").strip()
    verb, _, way = phrase.partition(" ")
    return _STILL_WORDS.get(phrase) or (way if verb in ("moves", "comes", "goes") and way else phrase)


def _motion_of(action: str) -> str:
    """`motion`'s phrase at the start of an instance's action, without the posture and facing
    that follow it after a comma (`body`)."""
    return (action or "seen briefly").split(", ")[0]


def directions(action: str) -> list[str]:
    """The direction phrases of an instance's action in a question's words."""
    return [direction_words(phrase) for phrase in _motion_of(action).split(" and ")]


def moves(action: str) -> bool | None:
    """Whether an instance's track moved over its life: None where it was seen too briefly to
    tell."""
    moving = _motion_of(action)
    return None if moving == "seen briefly" else moving != "stays in place"


def body(points: list[TrackPoint]) -> str:
    """Posture, facing and raised arms over the poses read, in time order, e.g. 'standing then
    sitting, back to the camera then facing the camera'; '' when no pose was read."""
    poses = [p.pose for p in points if p.pose is not None]
    postures = _steady([p.posture for p in poses if p.posture])
    facings = _steady([FACING[p.facing] for p in poses if p.facing])
    raised = [p.arm_raised for p in poses if p.arm_raised is not None]
    parts = [" then ".join(values) for values in (postures, facings) if values]
    # Twice, or every time when read once: a single raised wrist among many is a misreading.
    if raised and sum(raised) >= min(2, len(raised)):
        parts.append("raises an arm")
    return ", ".join(parts)


# Actions said of a person in a summary: the longest first, so a brief misreading comes last.
_ACTIONS_SAID = 4


def _act_words(act, kinds: dict[int, str]) -> str:
    if act.other_id is None:
        return act.action
    return f"{act.action} {kinds.get(act.other_id, '')} #{act.other_id}".replace("  ", " ")


def doing(acts: Sequence, kinds: dict[int, str]) -> str:
    """What a person does over the whole video, e.g. 'does: walking 0.0-6.2 s, holding cup
    #4 2.0-3.4 s' (`actions.Action`s; `kinds` names the other instances); '' when nothing was
    read. Postures are left to `body`, which says them already."""
    kept = sorted((a for a in acts if a.action not in POSTURES),
                  key=lambda a: a.t_start - a.t_end)[:_ACTIONS_SAID]
    if not kept:
        return ""
    return "does: " + ", ".join(f"{_act_words(a, kinds)} {a.t_start:.1f}-{a.t_end:.1f} s"
                                for a in sorted(kept, key=lambda a: a.t_start))


def actions_in(action: str) -> list[str]:
    """The actions an instance's action column says it does ('... does: walking 0.0-6.2 s,
    holding cup #4 2.0-3.4 s' -> ['walking', 'holding'])."""
    _, _, said = action.partition("does: ")
    names = sorted(ACTION_NAMES, key=len, reverse=True)
    return [next((n for n in names if part.startswith(n)), part) for part in said.split(", ") if part]


def doing_between(acts: Sequence, t0: float, t1: float, kinds: dict[int, str]) -> dict[int, str]:
    """{person: 'walking, holding cup #4'}: the actions under way in [t0, t1)."""
    during = defaultdict(list)
    for a in acts:
        if a.action not in POSTURES and a.t_start < t1 and a.t_end >= t0:
            words = _act_words(a, kinds)
            if words not in during[a.instance_id]:
                during[a.instance_id].append(words)
    return {i: ", ".join(words) for i, words in during.items()}


def _steady(values: list[str]) -> list[str]:
    """Values in time order with repeats merged; among 3 or more readings, a value read only
    once is taken as a misreading, and one that flips back and forth gives its usual value."""
    counts = Counter(values)
    kept = [v for v in values if counts[v] > 1 or len(values) < 3]
    runs = [v for k, v in enumerate(kept) if k == 0 or kept[k - 1] != v]
    return runs if len(runs) <= 3 else [Counter(kept).most_common(1)[0][0]]


def where(point: TrackPoint) -> str:
    """The third of the picture a track point is in, named as `backend.places` names it."""
    return third(point.cx, point.cy)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {'people' if noun == 'person' else noun + 's'}"


def segment_description(visible: dict[int, tuple[str, list[TrackPoint]]], speech: str,
                        text_on_screen: list[str], picture: str,
                        doing: dict[int, str] | None = None) -> str:
    """One time step: who is visible, where, how they move and what they do (`doing`, from
    backend/ingest/actions.py); the picture (cut, camera, colours, brightness, from
    backend/ingest/scenes.py); what is said and written."""
    doing = doing or {}
    if visible:
        counts = Counter(category for category, _ in visible.values())
        parts = [", ".join(_plural(n, c) for c, n in sorted(counts.items())) + " visible"]
        for instance_id, (category, points) in sorted(visible.items()):
            place = where(points[len(points) // 2])
            how = ", ".join(filter(None, [motion(points), body(points), doing.get(instance_id)]))
            parts.append(f"{category} #{instance_id} at {place}, {how}")
        sentence = "; ".join(parts) + "."
    else:
        sentence = "No tracked objects visible."
    return sentence + _picture_text_speech(picture, text_on_screen, speech, "On screen")


def _picture_text_speech(picture: str, text_on_screen: list[str], speech: str, text_label: str) -> str:
    """What a summary adds after the objects: the picture, the text read, the words said."""
    tail = f" {picture}" if picture else ""
    if text_on_screen:
        tail += f" {text_label}: " + "; ".join(f'"{t}"' for t in text_on_screen) + "."
    if speech:
        tail += f' Speech: "{speech}".'
    return tail


# Captions quoted in one window summary: a long window has many; the fine steps keep them all.
_WINDOW_CAPTIONS = 5


def window_summary(t_start: float, t_end: float, instances: dict[int, tuple[str, str]],
                   speech: str, text_on_screen: list[str], picture: str = "",
                   captions: Sequence[str] = ()) -> str:
    """A longer window: which instances appear (with appearance and action), its picture (cuts,
    camera, colours), speech, text, and what a captioner saw in its key frames.

    instances: id -> (category, "appearance, action").
    """
    span = f"From {t_start:.0f} s to {t_end:.0f} s"
    if instances:
        counts = Counter(category for category, _ in instances.values())
        who = ", ".join(_plural(n, c) for c, n in sorted(counts.items()))
        verb = "appears" if len(instances) == 1 else "appear"
        details = "; ".join(f"#{i}: {category}, {desc}"
                            for i, (category, desc) in sorted(instances.items()))
        sentence = f"{span}, {who} {verb} in all. {details}."
    else:
        sentence = f"{span}, no tracked objects appear."
    sentence += _picture_text_speech(picture, text_on_screen, speech, "On-screen text")
    if captions:
        more = " ..." if len(captions) > _WINDOW_CAPTIONS else ""
        sentence += " Seen: " + " ".join(captions[:_WINDOW_CAPTIONS]) + more
    return sentence
