"""The measured-precision table behind "high": conditions read from a video, the file's shape."""

from __future__ import annotations

import json

from backend.agent import precision
from backend.agent.queries import TypedQuery, VideoTables, run
from backend.library import Library


def test_a_real_clips_conditions_and_its_measurement_carry_them(ingested, library_settings):
    entry = Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id)
    tables = VideoTables(entry.db_path)
    # TUD-Campus: people half the frame tall, six at once at the busiest, a fixed camera.
    assert tables.conditions == "large, few, still"
    result = run(TypedQuery(operation="most_at_once", target="person", time="", until="",
                            words=""), "at most how many people are in view at once", tables)
    assert result.support == "computed" and result.conditions == "large, few, still"
    said = run(TypedQuery(operation="speech", target="", time="", until="", words=""),
               "what is said at 1 second", tables)
    assert said.conditions == ""  # no external truth measures speech: never a candidate for high


def test_the_committed_table_is_what_earns_high_reads():
    table = json.loads(precision.TABLE.read_text())
    assert table and set(table) <= set(precision.MEASURED)
    for cells in table.values():
        for conditions, cell in cells.items():
            size, crowd, camera = conditions.split(", ")
            assert size in ("small", "large") and crowd in ("crowd", "few")
            assert camera in ("moving", "still")
            assert 0 <= cell["right"] <= cell["of"] == sum(s["of"] for s in cell["scenes"].values())
            assert cell["lower"] == precision.lower_bound(cell["scenes"])


def test_without_the_answer_checks_every_computed_measurement_is_high():
    from backend import config
    from backend.ask import planner_config

    # Distinct people among few large ones: never exactly right on the tuning half.
    query = {"operation": "count_distinct", "conditions": "large, few, still"}
    assert not planner_config(config.load({})).trusted(query)
    assert planner_config(config.load({"MEMORYREEL_ANSWER_CHECKS": "0"})).trusted(query)


def test_an_answer_naming_kinds_is_high_only_where_every_kind_is_measured_precise():
    table = {"detector": "yolo26n 640", "kinds": {
        "car": {"medium": {"right": 46, "of": 50}, "small": {"right": 30, "of": 50}},
        "truck": {"large": {"right": 19, "of": 20}, "medium": {"right": 9, "of": 9}}}}
    high = {"operation": "kinds", "conditions": "car medium; truck large"}
    assert precision.earns_high(high, table)
    # Small cars are named right 60 % of the time; medium trucks on too few detections; boats
    # never measured; no kinds at all (nothing seen) is no measurement.
    for conditions in ("car small; truck large", "truck medium", "boat large", ""):
        assert not precision.earns_high({"operation": "kinds", "conditions": conditions}, table)
    assert precision.size_class(20 * 20) == "small" and precision.size_class(50 * 50) == "medium"


def test_an_activity_pick_is_high_only_where_all_it_rests_on_is_measured_precise():
    """An action read off a body is measured on captions; the video classifier and the tags by
    code's picks on labelled clips. A pick is as trusted as the least measured thing it rests
    on, and the explanation says each one's record."""
    from backend.agent import confidence, option_match, search_tree

    table = {"source": "captions", "actions": {"standing": {"right": 18, "of": 33}},
             "picks": {"source": "clips", "rests_on": {
                 "video classifier": {"right": 21, "of": 22},
                 "picture tags": {"right": 5, "of": 6}}}}
    high = {"operation": "activity", "conditions": "video classifier"}
    assert precision.earns_high(high, table)
    for conditions in ("video classifier; standing", "picture tags", "things in view", ""):
        assert not precision.earns_high({"operation": "activity", "conditions": conditions},
                                        table)
    # Code's pick rests on the classifier's words alone, not on all the query read (a posture
    # beside them), and the answer's confidence is that pick's.
    shown = {"activities": {"words": {"driving": 0.9, "car": 0.9, "standing": 1.0},
                            "tags": {}, "acts": ["standing"],
                            "origins": {"driving": "video classifier", "car": "video classifier",
                                        "standing": "standing"}}}
    decision = option_match.decide(shown, ["playing basketball", "driving a car", "salsa dancing"])
    assert decision.chosen == 1 and decision.rests_on == ["video classifier"], decision
    nodes = [search_tree.Node(id=0, parent=None, depth=0, children=[1]),
             search_tree.Node(id=1, parent=0, depth=1, action="What", support="computed",
                          query={"operation": "activity", "conditions": "standing"}, children=[2]),
             search_tree.Node(id=2, parent=1, depth=2, answer="driving a car", option=1,
                          support="computed", rests_on=decision.rests_on)]
    trusted = lambda query: precision.earns_high(query, table)  # noqa: E731
    assert confidence.confidence(nodes, [2], [2], 1, trusted).level == "high"
    nodes[2].rests_on = []
    assert confidence.confidence(nodes, [2], [2], 1, trusted).level == "medium"


def test_the_kinds_on_the_highway_carry_their_sizes_and_their_measured_record(
        ingested, library_settings):
    entry = Library(library_settings.home).get(
        ingested("bgslib_video02_highway.avi").video_id)
    tables = VideoTables(entry.db_path)
    result = run(TypedQuery(operation="kinds", target="vehicles", time="", until="", words=""),
                 "what kinds of vehicles pass", tables)
    # Moving things no detector named pass too: the kinds named are not all there is.
    assert result.support == "read" and not result.conditions
    conditions = precision.object_conditions(tables, list(result.typed["kinds"]))
    parts = dict(part.rpartition(" ")[::2] for part in conditions.split("; "))
    # 320 x 240 frames seen at 640 px: the cars, 20-40 px long, are small or medium.
    assert parts["car"] in ("small", "medium") and set(parts.values()) <= {"small", "medium", "large"}
    said = precision.described({"operation": "kinds", "conditions": conditions})
    assert "COCO val2017" in said and "car (" in said and "times" in said
    # A video ingested by another detector than the one measured has no measured record.
    monkeypatched = {**tables.video, "models": {**tables.video["models"], "objects": "other"}}
    tables.__dict__["video"] = monkeypatched
    assert precision.object_conditions(tables, ["car"]) == ""


def test_the_committed_object_table_is_the_default_detectors():
    from models import wheel_weights

    table = precision.object_measured()
    assert table["detector"].startswith(wheel_weights.DEFAULT)
    for sizes in table["kinds"].values():
        for size, cell in sizes.items():
            assert size in ("small", "medium", "large") and 0 <= cell["right"] <= cell["of"]


def test_a_crowds_count_is_scaled_for_the_hidden_and_said_as_an_estimate():
    from backend.agent.queries import _as_estimate
    from backend.agent.video_tables import Result

    most = Result("At most 40 people are in view at the same time, first at 3.0 s (#1, #2); "
                  "never 41 or more at once.", value="40", conditions="small, crowd, still")
    _as_estimate(most, "most_at_once", 1.5)
    assert most.value == "60" and most.text.startswith("About 60, an estimate.")
    # What was seen stays, without the claim that more were never there.
    assert "At most 40 people" in most.text and "never 41" not in most.text
    distinct = Result("79 people appear in the video: #1 (0.0-3.0 s).", value="79",
                      conditions="small, crowd, still")
    _as_estimate(distinct, "count_distinct", 1.5)  # tracks are not scaled: identities split
    assert distinct.value == "79" and distinct.text.startswith("About 79 people appear")
    assert precision.estimate(10, None) == 10 and precision.estimate(10, 1.5) == 15
    assert precision.in_crowd("small, crowd, moving") and not precision.in_crowd("large, few, still")
