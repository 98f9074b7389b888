"""Which computed measurements may be called "high": their precision measured on external truth.

A count or a direction computed from the tables is a measurement with an error rate: the
tracker misses small people and merges crowds, so "computed" alone says nothing about being
right. `measured_precision.json` beside this file holds, per kind of measurement (the typed
query's operation) and per condition the video shows (how large its people are, how many at
once), how many computed values were right of how many, on the tuning half of the external-only
workload (MOT sequences and their footage variants). `python -m backend bench measurements
--write` makes it again. A computed answer earns "high" only where that precision is at least
`HIGH_PRECISION` over at least `MIN_QUESTIONS` questions, and on that share of at least
`MIN_VIDEOS` videos; every other kind (speech, on-screen text, colours: no external truth
measures them yet) stays at most medium.

Objects are measured apart, kind by kind and by size (`object_precision.json`, written by
`python -m backend bench detectors --write` for the default object detector on COCO val2017
images): "which kinds of vehicles pass" answered from the kinds tracked earns "high" only where
every kind the answer rests on, at the size it was seen, was named right at least
`HIGH_PRECISION` of the time over at least `MIN_BOXES` detections, by the detector this video was
ingested with.

Videos count, not only questions: the questions about one video ask one measurement several
ways and are right or wrong together. Most at once in large crowds was right on 24 of 24 tuning
questions from 5 videos, and on 6 of 27 reporting ones (a person too many or too few).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).with_name("measured_precision.json")
OBJECT_TABLE = Path(__file__).with_name("object_precision.json")
# Typed operations whose computed value is the kinds an object detector named.
OBJECT_MEASURED = ("kinds", "held")
MIN_BOXES = 20
# Object sizes as COCO classes them, at the detector's input (the long side at this many pixels:
# ingest's default and COCO's own images), in `bench detectors` and in a video alike.
REFERENCE = 640
SMALL_AREA, LARGE_AREA = 32 * 32, 96 * 96
HIGH_PRECISION = 0.9
MIN_QUESTIONS = 5
# All of 8 videos right is what a per-video precision of 75 % gives less than one time in ten
# (0.75^8 = 0.10); with 5 it gives one time in four.
MIN_VIDEOS = 8
# Typed operations about people whose computed value the external workload checks (an
# appearance query answers when the first one leaves and when the last one arrives).
MEASURED = ("in_view", "most_at_once", "count_distinct", "movement", "first_appearance",
            "last_appearance")
# A person box under this share of the frame's height is small: at 640 px input such people are
# missed more often (`bench tracking --variants`, the 0.35x and 0.5x variants).
SMALL_PERSON = 0.25
CROWD = 5  # this many people or more at once make a crowd, where boxes overlap and merge


def conditions(tables) -> str:
    """The conditions a video's people measurements were made in, e.g. 'small, crowd'."""
    row = tables.rows(
        "SELECT (SELECT AVG((d.y2 - d.y1) * 1.0 / v.height) FROM detections d JOIN instances i "
        "ON i.id = d.instance_id, video v WHERE i.category = 'person') AS size, "
        "(SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM detections d JOIN instances i "
        "ON i.id = d.instance_id WHERE i.category = 'person' GROUP BY d.frame)) AS most")[0]
    if row["size"] is None:
        return ""
    size = "small" if row["size"] < SMALL_PERSON else "large"
    return f"{size}, {'crowd' if (row['most'] or 0) >= CROWD else 'few'}"


@lru_cache(maxsize=1)
def measured() -> dict:
    """{operation: {conditions: {"right", "of", "videos_right", "videos"}}} from the file; {}
    where it is missing."""
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
    found = cell(query, table)
    return bool(found) and found["of"] >= MIN_QUESTIONS and \
        found["right"] / found["of"] >= HIGH_PRECISION and \
        found.get("videos", 0) >= MIN_VIDEOS and \
        found["videos_right"] / found["videos"] >= HIGH_PRECISION


def described(query: dict) -> str:
    """The measured record of the query's kind of measurement, in a sentence for the user."""
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
            f"on every question of {found.get('videos_right', 0)} of {found.get('videos', 0)} "
            f"videos.")
