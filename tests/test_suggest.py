"""Suggested questions follow what ingest found in each real clip."""

from __future__ import annotations

import re

from backend.agent.timephrases import resolve
from backend.library import Library
from backend.sql_runner import run_query
from backend.suggest import suggest


def _suggested(ingested, settings, name) -> tuple[list[str], object]:
    entry = Library(settings.home).get(ingested(name).video_id)
    return suggest(entry.db_path), entry


def _count(entry, sql) -> int:
    return run_query(entry.db_path, sql, timeout_s=5, max_rows=1).rows[0][0]


def test_a_clip_without_people_suggests_nothing_about_people(ingested, library_settings):
    questions, entry = _suggested(ingested, library_settings, "intel_car-detection.mp4")
    assert _count(entry, "SELECT COUNT(*) FROM instances WHERE category = 'person'") == 0
    assert questions and not any(re.search(r"\b(people|person)\b", q) for q in questions), questions
    # The cars were tracked as moving objects; a question about one names a time it is seen.
    assert "how many moving objects appear in the video" in questions
    seen = [q for q in questions if q.startswith("what colour is the moving object seen at")]
    assert seen, questions
    t = resolve(seen[0], 30.0).start
    assert _count(entry, f"SELECT COUNT(*) FROM detections d JOIN instances i ON i.id = "
                         f"d.instance_id WHERE i.category = 'moving object' AND "
                         f"abs(d.t - {t}) < 0.3") > 0, (seen, t)


def test_speech_suggestion_names_a_time_at_which_words_are_said(ingested, library_settings):
    questions, entry = _suggested(ingested, library_settings, "autoeditor_example_speech.mp4")
    said = [q for q in questions if q.startswith("what is said")]
    assert said, questions
    t = resolve(said[0], 60.0).start
    assert _count(entry, f"SELECT COUNT(*) FROM speech_words WHERE t_start <= {t + 1} "
                         f"AND t_end >= {t - 1}") > 0, (said, t)


def test_people_clip_suggests_counting_and_direction(ingested, library_settings):
    questions, _ = _suggested(ingested, library_settings, "mot15_TUD-Campus.mp4")
    assert "how many people appear in the video" in questions
    assert "which way do most of the people move" in questions
    assert not any(q.startswith("what is said") for q in questions)  # no audio track
