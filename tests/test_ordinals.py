""""The leftmost person", "the person nearest the camera": one of several, picked by code by
where it is, against the MOT truth of TUD-Stadtmitte (people walking both ways)."""

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
