"""Suggested questions follow what ingest found in each real clip."""

from __future__ import annotations

import json
import re
import sqlite3

import sqlite_utils

from backend import schema
from backend.agent.queries import TypedQuery, VideoTables, run
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
    # The cars were tracked as moving objects (the object detector calls some of them cell
    # phones: its kinds are asked about first); a question about one names a time it is seen.
    assert any(re.fullmatch(r"how many [a-z ]+s appear in the video", q) for q in questions)
    seen = [q for q in questions if q.startswith("what colour is the moving object seen at")]
    assert seen, questions
    t = resolve(seen[0], 30.0).start
    assert _count(entry, f"SELECT COUNT(*) FROM detections d JOIN instances i ON i.id = "
                         f"d.instance_id WHERE i.category = 'moving object' AND "
                         f"abs(d.t - {t}) < 0.3") > 0, (seen, t)


def _what_the_agent_reads(question: str, db_path) -> str:
    """The word the agent's "what is said at T" query answers the suggested question with."""
    query = TypedQuery(operation="speech", target="", time="", until="", words="")
    return run(query, question, VideoTables(db_path)).value


def _speech_with_a_silent_middle(path) -> None:
    """A 60 s clip whose longest segment (13.7-40.3 s) has words only near its two ends, as
    Whisper wrote it on a CPU where its midpoint (27 s) is a pause; and one shorter segment."""
    db = sqlite_utils.Database(path)
    schema.create_tables(db)
    db["video"].insert({"id": "v", "name": "talk.mp4", "fps": 25.0, "frames": 1500,
                        "duration": 60.0, "width": 640, "height": 360, "has_audio": 1,
                        "models": json.dumps({"speech": "whisper", "categories": ["person"]})})
    db["speech"].insert_all([{"id": 1, "t_start": 2.0, "t_end": 4.0, "text": "well then"},
                             {"id": 2, "t_start": 13.7, "t_end": 40.3,
                              "text": "and now I will wait ... okay done"}])
    words = [(1, 2.0, 2.5, "well"), (1, 3.4, 4.0, "then"),
             (2, 13.7, 14.0, "and"), (2, 14.0, 14.3, "now"), (2, 14.3, 14.4, "I"),
             (2, 14.4, 14.7, "will"), (2, 14.7, 15.1, "wait"),
             (2, 39.2, 39.7, "okay"), (2, 39.8, 40.3, "done")]
    db["speech_words"].insert_all({"segment_id": s, "t_start": a, "t_end": b, "word": w}
                                  for s, a, b, w in words)


def test_speech_suggestion_is_a_time_with_words_even_when_the_longest_segment_pauses(tmp_path):
    path = tmp_path / "talk.db"
    _speech_with_a_silent_middle(path)
    said = [q for q in suggest(path) if q.startswith("what is said")]
    assert len(said) == 1
    # The agent finds a word there, from the densest run (not the lone "well" or "okay").
    assert _what_the_agent_reads(said[0], path) in {"and", "now", "I", "will", "wait"}, said


def test_speech_suggestion_names_a_time_at_which_words_are_said(ingested, library_settings):
    # Whatever Whisper's segments and word times are on this CPU, the suggested time is one the
    # agent finds words at (was: the middle of the longest segment, a pause on another CPU).
    questions, entry = _suggested(ingested, library_settings, "autoeditor_example_speech.mp4")
    said = [q for q in questions if q.startswith("what is said")]
    assert said, questions
    word = _what_the_agent_reads(said[0], entry.db_path)
    t = resolve(said[0], 60.0).start
    # The time is a word's middle, written to a tenth of a second.
    assert word and _count(entry, f"SELECT COUNT(*) FROM speech_words WHERE t_start <= {t + 0.1} "
                                  f"AND t_end >= {t - 0.1}") > 0, (said, t, word)


def test_people_clip_suggests_counting_and_direction(ingested, library_settings):
    questions, _ = _suggested(ingested, library_settings, "mot15_TUD-Campus.mp4")
    assert "how many people appear in the video" in questions
    assert "which way do most of the people move" in questions
    assert not any(q.startswith("what is said") for q in questions)  # no audio track


def _people_doing(path, actions: list[tuple]) -> None:
    """A 30 s clip with two people and the given (instance_id, action, t_start, t_end, score)."""
    db = sqlite_utils.Database(path)
    schema.create_tables(db)
    db["video"].insert({"id": "v", "name": "yard.mp4", "fps": 25.0, "frames": 750,
                        "duration": 30.0, "width": 640, "height": 360, "has_audio": 0,
                        "models": "{}"})
    db["instances"].insert_all([{"id": k, "category": "person", "first_seen": 0.0,
                                 "last_seen": 30.0, "frame_count": 150} for k in (1, 3)])
    db["actions"].insert_all({"instance_id": i, "action": a, "t_start": s, "t_end": e,
                              "score": p, "evidence": "keypoints"} for i, a, s, e, p in actions)
    db.close()


def test_a_clip_with_actions_and_only_such_a_clip_suggests_asking_what_a_person_does(tmp_path):
    path = tmp_path / "yard.db"
    _people_doing(path, [(1, "walking", 0.0, 30.0, 0.5), (3, "waving", 10.0, 14.0, 0.9)])
    doing = [q for q in suggest(path) if " doing " in q]
    # The action ingest is surest of, asked at a time inside it.
    assert doing == ["what is person 3 doing at 12 seconds"], doing
    assert 10.0 <= resolve(doing[0], 30.0).start <= 14.0
    # Without actions, no such question.
    _people_doing(tmp_path / "still.db", [])
    assert not any(" doing " in q for q in suggest(tmp_path / "still.db"))
    # A video ingested before there were actions: no such table, the same suggestions.
    _people_doing(tmp_path / "older.db", [])
    with sqlite3.connect(tmp_path / "older.db") as db:
        db.execute("DROP TABLE actions")
    assert suggest(tmp_path / "older.db") == suggest(tmp_path / "still.db")


def test_only_a_sure_activity_suggests_asking_what_is_happening(tmp_path):
    """The classifier's reading is offered where it is sure somewhere (a probability of one
    half or more in a window), not where its best guess is a guess."""
    for name, score in (("sure.db", 0.83), ("unsure.db", 0.41)):
        _people_doing(tmp_path / name, [(1, "walking", 0.0, 30.0, 0.5)])
        db = sqlite_utils.Database(tmp_path / name)
        db["activities"].insert_all([{"id": 1, "t_start": 0.0, "t_end": 15.0,
                                      "activity": "washing dishes", "score": score},
                                     {"id": 2, "t_start": 15.0, "t_end": 30.0,
                                      "activity": "washing dishes", "score": 0.2}])
        db.close()
    assert suggest(tmp_path / "sure.db")[0] == "what is happening in the video"
    assert "what is happening in the video" not in suggest(tmp_path / "unsure.db")
    _people_doing(tmp_path / "older.db", [])
    with sqlite3.connect(tmp_path / "older.db") as db:
        db.execute("DROP TABLE activities")
    assert "what is happening in the video" not in suggest(tmp_path / "older.db")
