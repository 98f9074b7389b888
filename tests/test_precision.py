"""The measured-precision table behind "high": conditions read from a video, the file's shape."""

from __future__ import annotations

import json

from backend.agent import precision
from backend.agent.queries import TypedQuery, VideoTables, run
from backend.library import Library


def test_a_real_clips_conditions_and_its_measurement_carry_them(ingested, library_settings):
    entry = Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id)
    tables = VideoTables(entry.db_path)
    # TUD-Campus: people half the frame tall, six at once at the busiest.
    assert tables.conditions == "large, crowd"
    result = run(TypedQuery(operation="most_at_once", target="person", time="", until="",
                            words=""), "at most how many people are in view at once", tables)
    assert result.support == "computed" and result.conditions == "large, crowd"
    said = run(TypedQuery(operation="speech", target="", time="", until="", words=""),
               "what is said at 1 second", tables)
    assert said.conditions == ""  # no external truth measures speech: never a candidate for high


def test_the_committed_table_is_what_earns_high_reads():
    table = json.loads(precision.TABLE.read_text())
    assert table and set(table) <= set(precision.MEASURED)
    for cells in table.values():
        for conditions, cell in cells.items():
            size, crowd = conditions.split(", ")
            assert size in ("small", "large") and crowd in ("crowd", "few")
            assert 0 <= cell["right"] <= cell["of"]
            assert 0 <= cell["videos_right"] <= cell["videos"] <= cell["of"]


def test_without_the_answer_checks_every_computed_measurement_is_high():
    from backend import config
    from backend.ask import planner_config

    # Distinct people in large crowds: measured wrong on most of the tuning half.
    query = {"operation": "count_distinct", "conditions": "large, crowd"}
    assert not planner_config(config.load({})).trusted(query)
    assert planner_config(config.load({"MEMORYREEL_ANSWER_CHECKS": "0"})).trusted(query)
