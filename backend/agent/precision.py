"""Which computed measurements may be called "high": their precision measured on external truth.

A count or a direction computed from the tables is a measurement with an error rate: the
tracker misses small people and merges crowds, so "computed" alone says nothing about being
right. `measured_precision.json` beside this file holds, per kind of measurement (the typed
query's operation) and per condition the video shows (how large its people are, whether they
are a crowd, whether the camera moves), how many computed values were right of how many on each
scene of the tuning half of the external-only workload (eight scenes with person truth and their
footage variants; `evaluation/scenes.py`), and a lower bound on that precision. `python -m
backend bench measurements --write` makes it again.

Scenes are the unit of independence: a scene's variants, and the several questions asked of one
video, are right or wrong together. So the bound is a scene bootstrap (`lower_bound`): scenes
drawn with replacement, each scene's precision drawn from what its own questions allow, and the
5th percentile of the pooled precision kept. A computed answer earns "high" only where that bound
is at least `HIGH_PRECISION` on at least `MIN_SCENES` scenes; every other kind (speech, on-screen
text, colours: no external truth measures them yet) stays at most medium.

Objects are measured apart, kind by kind and by size (`object_precision.json`, written by
`python -m backend bench detectors --write` for the default object detector on COCO val2017
images): "which kinds of vehicles pass" answered from the kinds tracked earns "high" only where
every kind the answer rests on, at the size it was seen, was named right at least
`HIGH_PRECISION` of the time over at least `MIN_BOXES` detections, by the detector this video was
ingested with.

A crowd's count is an estimate: `crowd_count.json` (`python -m backend bench tracking --write`)
holds the crowd factor, people there per person seen in the tuning half's crowd scenes by the
crowd detector; `estimate` scales a count seen in a crowd by it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from backend.ingest.tracks import CROWD

TABLE = Path(__file__).with_name("measured_precision.json")
OBJECT_TABLE = Path(__file__).with_name("object_precision.json")
CROWD_TABLE = Path(__file__).with_name("crowd_count.json")
ACTION_TABLE = Path(__file__).with_name("action_precision.json")
# Typed operations whose computed value rests on the actions read from keypoints and objects.
ACTION_MEASURED = ("activity",)
# Typed operations whose computed value is the kinds an object detector named.
OBJECT_MEASURED = ("kinds", "held")
MIN_BOXES = 20
# Object sizes as COCO classes them, at the detector's input (the long side at this many pixels:
# ingest's default and COCO's own images), in `bench detectors` and in a video alike.
REFERENCE = 640
SMALL_AREA, LARGE_AREA = 32 * 32, 96 * 96
HIGH_PRECISION = 0.9
# One scene's variants all agree or all fail together, so one scene bounds nothing.
MIN_SCENES = 2
BOOTSTRAP_DRAWS = 4000
# Typed operations about people whose computed value the external workload checks (an
# appearance query answers when the first one leaves and when the last one arrives).
MEASURED = ("in_view", "most_at_once", "count_distinct", "movement", "first_appearance",
            "last_appearance")
# A person box under this share of the frame's height is small: at 640 px input such people are
# missed more often (`bench tracking --variants`, the 0.35x and 0.5x variants).
SMALL_PERSON = 0.25
# A camera that moves over more than this share of the video: tracks jump with the picture.
MOVING_SHARE = 0.5


def conditions(tables) -> str:
    """The conditions a video's people measurements were made in, e.g. 'small, crowd, moving'."""
    row = tables.rows(
        "SELECT (SELECT AVG((d.y2 - d.y1) * 1.0 / v.height) FROM detections d JOIN instances i "
        "ON i.id = d.instance_id, video v WHERE i.category = 'person') AS size, "
        "(SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM detections d JOIN instances i "
        "ON i.id = d.instance_id WHERE i.category = 'person' GROUP BY d.frame)) AS most, "
        "(SELECT AVG(camera NOT IN ('static', 'unknown')) FROM scenes) AS moving")[0]
    if row["size"] is None:
        return ""
    size = "small" if row["size"] < SMALL_PERSON else "large"
    camera = "moving" if (row["moving"] or 0) > MOVING_SHARE else "still"
    return f"{size}, {'crowd' if (row['most'] or 0) > CROWD else 'few'}, {camera}"


def estimate(seen: int, factor: float | None) -> int:
    """A count of `seen` people in a crowd as an answer gives it: scaled by the measured crowd
    factor for the people hidden in it."""
    return round(seen * factor) if factor else seen


def in_crowd(conditions: str) -> bool:
    """Whether a video's conditions (`conditions`) are a crowd's."""
    return conditions.split(", ")[1:2] == ["crowd"]


@lru_cache(maxsize=1)
def crowd_measured() -> dict:
    """{"detector", "factor", "frames", "seen", "true", "scenes"} from CROWD_TABLE; {} where it
    is missing."""
    return json.loads(CROWD_TABLE.read_text()) if CROWD_TABLE.is_file() else {}


def crowd_factor(tables, table: dict | None = None) -> float | None:
    """People there per person seen, measured for crowds tracked by the detector this video was
    tracked with; None where this video is no crowd or its detector was not measured."""
    found = crowd_measured() if table is None else table
    tracker = str(tables.video["models"].get("tracker", ""))
    measured_by = found.get("detector")
    if not measured_by or not tracker.startswith(measured_by) or not in_crowd(tables.conditions):
        return None
    return found.get("factor")


def relative_error(query: dict, table: dict | None = None) -> float | None:
    """The mean share a count of this kind, in these conditions, was off by when measured."""
    found = cell(query, table)
    return found.get("relative_error") if found else None


def lower_bound(scenes: dict[str, dict], draws: int = BOOTSTRAP_DRAWS, seed: int = 0,
                share: float = 0.05) -> float:
    """The `share` quantile of precision over scene bootstrap draws: scenes ({name: {"right",
    "of"}}) drawn with replacement, each drawn scene's precision from its Jeffreys posterior
    (Beta(right + 1/2, wrong + 1/2), so five right of five is not taken for certainty), pooled
    over its questions. 0 without scenes."""
    cells = [scenes[name] for name in sorted(scenes) if scenes[name]["of"]]  # any order, one bound
    if not cells:
        return 0.0
    rng = np.random.default_rng(seed)
    right = np.array([c["right"] for c in cells], dtype=float)
    of = np.array([c["of"] for c in cells], dtype=float)
    picks = rng.integers(0, len(cells), size=(draws, len(cells)))
    rates = rng.beta(right[picks] + 0.5, of[picks] - right[picks] + 0.5)
    pooled = (rates * of[picks]).sum(axis=1) / of[picks].sum(axis=1)
    return round(float(np.quantile(pooled, share)), 3)


@lru_cache(maxsize=1)
def measured() -> dict:
    """{operation: {conditions: {"right", "of", "scenes": {scene: {"right", "of"}}, "lower"}}}
    from the file; {} where it is missing."""
    return json.loads(TABLE.read_text()) if TABLE.is_file() else {}


def cell(query: dict, table: dict | None = None) -> dict | None:
    """{"right", "of"} measured for the typed query's operation in its conditions, if any."""
    return (measured() if table is None else table).get(query.get("operation", ""), {}).get(
        query.get("conditions", ""))


def object_conditions(tables, kinds: list[str]) -> str:
    """The kinds an answer rests on with the size each was mostly seen at, e.g. 'car medium;
    truck large'; empty when this video's object detector is not the one measured."""
    detector = str(tables.video["models"].get("objects", ""))
    measured_by = object_measured().get("detector")
    if not kinds or not measured_by or not detector.startswith(measured_by):
        return ""
    scale = REFERENCE / max(tables.video["width"] or 1, tables.video["height"] or 1)
    rows = tables.rows(
        "SELECT i.category, AVG((d.x2 - d.x1) * (d.y2 - d.y1)) AS area FROM detections d "
        "JOIN instances i ON i.id = d.instance_id GROUP BY i.category")
    areas = {r["category"]: (r["area"] or 0) * scale * scale for r in rows}
    return "; ".join(f"{kind} {size_class(areas.get(kind, 0))}" for kind in kinds)


def size_class(area: float) -> str:
    return "small" if area < SMALL_AREA else "medium" if area < LARGE_AREA else "large"


@lru_cache(maxsize=1)
def object_measured() -> dict:
    """{"detector", "source", "kinds": {kind: {size: {"right", "of"}}}} from the file; {} where
    it is missing."""
    return json.loads(OBJECT_TABLE.read_text()) if OBJECT_TABLE.is_file() else {}


def object_cells(query: dict, table: dict | None = None) -> list[tuple[str, str, dict | None]]:
    """(kind, size, {"right", "of"} or None) for each kind an object answer rests on."""
    kinds = (object_measured() if table is None else table).get("kinds", {})
    cells = []
    for part in filter(None, query.get("conditions", "").split("; ")):
        kind, _, size = part.rpartition(" ")
        cells.append((kind, size, kinds.get(kind, {}).get(size)))
    return cells


def precise_kind(cell: dict | None) -> bool:
    """Whether a kind at a size ({"right", "of"}) was named right often enough on enough
    detections to be called high."""
    return cell is not None and cell["of"] >= MIN_BOXES and \
        cell["right"] / cell["of"] >= HIGH_PRECISION


def earns_high(query: dict, table: dict | None = None) -> bool:
    """Whether the measurement behind a computed answer (the typed query a tool ran, with the
    conditions it ran in) is precise enough, as measured, to be called high."""
    if query.get("operation") in OBJECT_MEASURED:
        cells = object_cells(query, table)
        return bool(cells) and all(precise_kind(c) for _, _, c in cells)
    if query.get("operation") in ACTION_MEASURED:
        cells = action_cells(query, table)
        return bool(cells) and all(precise_kind(c) for _, c, _ in cells)
    found = cell(query, table)
    return bool(found) and len(found.get("scenes", {})) >= MIN_SCENES and \
        found.get("lower", 0) >= HIGH_PRECISION


@lru_cache(maxsize=1)
def action_measured() -> dict:
    """{"source", "actions": {action: {"right", "of"}}, "picks": {"source", "rests_on": {kind of
    evidence: {"right", "of"}}}} from the file (`bench actions --write`, and `bench actions
    --clips ... --write` for the picks); {} where it is missing."""
    return json.loads(ACTION_TABLE.read_text()) if ACTION_TABLE.is_file() else {}


def action_cells(query: dict, table: dict | None = None) -> list[tuple[str, dict | None, str]]:
    """(what it rests on, {"right", "of"} or None, where that was measured) for each action or
    kind of evidence (the video classifier, the picture's tags) an activity answer rests on.
    An action read off a body is measured on captions; the rest by code's picks on labelled
    clips."""
    found = action_measured() if table is None else table
    picks = found.get("picks", {})
    cells = []
    for part in filter(None, query.get("conditions", "").split("; ")):
        if part in found.get("actions", {}):
            cells.append((part, found["actions"][part], found.get("source", "human captions")))
        else:
            cells.append((part, picks.get("rests_on", {}).get(part),
                          picks.get("source", "labelled action clips")))
    return cells


def described(query: dict) -> str:
    """The measured record of the query's kind of measurement, in a sentence for the user."""
    if query.get("operation") in ACTION_MEASURED:
        said = [f"{a} right {c['right']} of {c['of']} times (on {source})" if c else
                f"{a} never measured" for a, c, source in action_cells(query)]
        return f" Measured: {', '.join(said)}." if said else ""
    if query.get("operation") in OBJECT_MEASURED:
        cells = object_cells(query)
        if not cells:
            return ""
        said = [f"{kind} ({size}) right {c['right']} of {c['of']} times" if c else
                f"{kind} ({size}) never measured" for kind, size, c in cells]
        return (f" Measured on {object_measured().get('source', 'images with real boxes')}, "
                f"the object detector named {', '.join(said)}.")
    found = cell(query)
    if not found:
        return ""
    return (f" Measured on external truth, {query['operation']} in videos like this one "
            f"({query['conditions']} people) was right {found['right']} of {found['of']} times, "
            f"on {len(found.get('scenes', {}))} scenes (at least {found.get('lower', 0):.0%} "
            f"right, scenes drawn again and again).")
