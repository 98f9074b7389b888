""""The leftmost person", "the person nearest the camera", "the woman in the red coat": one of
several, picked by code by where it is or what it wears, against the MOT truth of TUD-Stadtmitte
(people walking both ways)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest

from backend.agent import ordinals
from backend.ask import ask
from tests.conftest import SHARED

CLIP = "mot15_TUD-Stadtmitte.mp4"
OPTIONS = ["left to right", "right to left"]


def _truth_direction(pick) -> str:
    """The way the person the truth's busiest frame shows at `pick` (min or max of a key over
    the frame's boxes) walks, from their first to their last true box."""
    per_frame, tracks = defaultdict(list), defaultdict(list)
    for line in (SHARED / "videos/ground-truth/TUD-Stadtmitte/gt.txt").read_text().splitlines():
        frame, person, x, y, w, h = (float(v) for v in line.split(",")[:6])
        per_frame[int(frame)].append((x + w / 2, h, int(person)))
        tracks[int(person)].append((frame, x + w / 2))
    busiest = max(sorted(per_frame), key=lambda f: len(per_frame[f]))
    person = pick(per_frame[busiest])[2]
    path = sorted(tracks[person])
    return "left to right" if path[-1][1] > path[0][1] else "right to left"


@pytest.mark.parametrize("question, pick", [
    ("In which direction does the leftmost person walk?", lambda boxes: min(boxes)),
    ("In which direction does the rightmost person walk?", lambda boxes: max(boxes)),
    ("Which way does the person nearest the camera walk?",
     lambda boxes: max(boxes, key=lambda b: b[1])),
])
def test_the_one_picked_by_place_walks_the_way_the_truth_says(ingested, library_settings,
                                                               question, pick):
    settings = replace(library_settings, memory=False)
    answer = ask(ingested(CLIP).video_id, question, settings, options=OPTIONS)
    assert answer.usage.llm_calls == 0, answer.answer
    assert OPTIONS[answer.option] == _truth_direction(pick), answer.evidence[0].observation
    assert answer.evidence[0].observation.startswith("#")  # one person's track, not a tally


@pytest.mark.parametrize("question, picks", [
    ("where is the leftmost car", True), ("which car is in the background", True),
    ("which car is nearest the bus", False), ("where is the car", False),
])
def test_only_a_place_in_the_picture_picks_one(question, picks):
    assert (ordinals.asked(question) is not None) == picks


@pytest.mark.parametrize("question, kind, asked", [
    ("which way does the man in red walk", "person", ("red", "")),
    ("where is the woman wearing a blue shirt at 3 s", "person", ("blue", "top")),
    ("what is the man with the green jacket holding", "person", ("green", "top")),
    ("is the girl in black jeans sitting", "person", ("black", "bottom")),
    ("where is the man in the red car", "person", None),
    ("where is the man with the red bag", "person", None),
    ("which way does the white van go", "van", ("white", "")),
    ("which way does the car go", "car", None),
])
def test_a_colour_worn_or_said_of_a_thing_picks_one(question, kind, asked):
    assert ordinals.look_asked(question, kind) == asked


def test_the_one_picked_by_colour_walks_the_way_the_truth_says(ingested, library_settings):
    """TUD-Stadtmitte: one woman wears a red coat (seen in its first frame); asked which way she
    walks, code picks the one person whose measured top is red and answers with her track alone,
    the way her true track (the MOT box her first box overlaps most) goes."""
    settings, video_id, tables, red = _in_red(ingested, library_settings)
    first = tables.rows(f"SELECT t, x1, y1, x2, y2 FROM detections WHERE instance_id = {red} "
                        f"ORDER BY t LIMIT 1")[0]
    answer = ask(video_id, "Which way does the woman in the red coat walk?", settings,
                 options=OPTIONS)
    assert answer.usage.llm_calls == 0, answer.answer
    assert answer.evidence[0].observation.startswith(f"#{red} "), answer.evidence[0].observation
    assert OPTIONS[answer.option] == _truth_direction_at(first), answer.answer


def test_the_one_picked_by_colour_is_read_walking_though_the_clip_cuts_her_short(
        ingested, library_settings):
    """TUD-Stadtmitte: the woman in the red coat walks out of the picture's left edge in the
    clip's first second, so her track is shorter than a stride; asked whether she walks, code
    says yes of her alone, with no call (it had said that nothing of hers was read)."""
    settings, video_id, _, red = _in_red(ingested, library_settings)
    answer = ask(video_id, "Is the woman in the red coat walking?", settings)
    assert answer.usage.llm_calls == 0, answer.answer
    assert answer.answer.startswith(f"Yes: #{red} walking"), answer.answer


def _in_red(ingested, library_settings):
    """(settings without memory, TUD-Stadtmitte's id, its tables, the one person whose measured
    top is red: the woman in the red coat)."""
    from backend.agent.video_tables import VideoTables
    from backend.library import Library

    settings = replace(library_settings, memory=False)
    video_id = ingested(CLIP).video_id
    tables = VideoTables(Library(settings.home).get(video_id).db_path)
    red = [r["id"] for r in tables.rows("SELECT id, appearance FROM instances WHERE category = "
                                        "'person'") if "red top" in (r["appearance"] or "")]
    assert len(red) == 1, red
    return settings, video_id, tables, red[0]


def _truth_direction_at(box: dict) -> str:
    """The way the true person whose box at `box`'s time overlaps it most walks."""
    rows = [[float(v) for v in line.split(",")[:6]] for line in
            (SHARED / "videos/ground-truth/TUD-Stadtmitte/gt.txt").read_text().splitlines()]
    frame = round(box["t"] * 25) + 1  # MOT frames count from 1, at the clip's 25 fps

    def overlap(x, y, w, h):
        ix = max(0.0, min(x + w, box["x2"]) - max(x, box["x1"]))
        iy = max(0.0, min(y + h, box["y2"]) - max(y, box["y1"]))
        union = w * h + (box["x2"] - box["x1"]) * (box["y2"] - box["y1"]) - ix * iy
        return ix * iy / union
    at = [r for r in rows if int(r[0]) == frame]
    person = max(at, key=lambda r: overlap(*r[2:6]))
    assert overlap(*person[2:6]) >= 0.5
    path = sorted((r[0], r[2] + r[4] / 2) for r in rows if r[1] == person[1])
    return "left to right" if path[-1][1] > path[0][1] else "right to left"
