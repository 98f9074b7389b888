"""Ingest of real clips with the real offline models: what lands in the tables and memories."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from backend import episodic
from backend.ingest.pipeline import ingest
from backend.library import Library
from backend.sql_runner import run_query
from tests.conftest import REPO, SHARED, clip


def rows(settings, video_id, sql):
    db = Library(settings.home).get(video_id).db_path
    return run_query(db, sql, timeout_s=5, max_rows=10_000).as_dicts()


def ground_truth_counts() -> dict[str, int]:
    per_frame: dict[int, set[int]] = {}
    for line in (SHARED / "videos/ground-truth/TUD-Campus/gt.txt").read_text().splitlines():
        frame, person = (int(float(v)) for v in line.split(",")[:2])
        per_frame.setdefault(frame, set()).add(person)
    return {"first": len(per_frame[min(per_frame)]),
            "max": max(len(p) for p in per_frame.values()),
            "distinct": len(set().union(*per_frame.values()))}


def test_tud_campus_people_counts_match_ground_truth(ingested, library_settings):
    truth = ground_truth_counts()
    assert truth == {"first": 6, "max": 6, "distinct": 8}
    vid = ingested("mot15_TUD-Campus.mp4").video_id
    first = rows(library_settings, vid, "SELECT COUNT(DISTINCT instance_id) AS n FROM detections "
                                        "WHERE frame = (SELECT MIN(frame) FROM detections)")[0]["n"]
    most = rows(library_settings, vid, "SELECT MAX(n) AS n FROM (SELECT COUNT(*) AS n "
                                       "FROM detections GROUP BY frame)")[0]["n"]
    distinct = rows(library_settings, vid, "SELECT COUNT(*) AS n FROM instances")[0]["n"]
    # +-1: people at the frame edge and two walking in step are ambiguous even to a human
    # looking at 5 sampled frames per second; the raw tracker was off by 3 and 10.
    assert abs(first - truth["first"]) <= 1
    assert abs(most - truth["max"]) <= 1
    assert abs(distinct - truth["distinct"]) <= 1


def test_tud_campus_people_walk_and_are_described(ingested, library_settings):
    vid = ingested("mot15_TUD-Campus.mp4").video_id
    people = rows(library_settings, vid, "SELECT appearance, action FROM instances")
    assert all(p["appearance"].startswith("person in ") for p in people)
    # Most people cross the frame left to right (dev-qa.csv, question 2 on this clip).
    walking = [p for p in people if "left to right" in p["action"]]
    assert len(walking) > len(people) / 2


def test_speech_clip_hears_banana_near_40_seconds(ingested, library_settings):
    vid = ingested("autoeditor_example_speech.mp4").video_id
    words = rows(library_settings, vid, "SELECT t_start, word FROM speech_words "
                                        "WHERE lower(word) LIKE '%banana%'")
    late = [w for w in words if 37.0 <= w["t_start"] <= 42.5]
    assert late, words
    # The time step in which the word starts carries it (the speaker also announces it at 17 s).
    # Its own time, not 40 s: where Whisper puts the word moves with the CPU (it started at
    # 39.24, 39.7, 39.8, 39.9 and 40.24 s in the audit of issue #23), and it may end before 40 s.
    t = late[0]["t_start"]
    step = rows(library_settings, vid, f"SELECT speech FROM timeline WHERE t_start <= {t} "
                                       f"AND t_end > {t}")
    assert "banana" in step[0]["speech"].lower()


def test_highway_clip_reads_camera_overlay_text(ingested, library_settings):
    # The issue asked for "PEDESTRIAN" here, but no frame of this copy of the clip shows that
    # word (checked by eye and by OCR every 0.2 s); the real overlay is the camera's date and
    # time at the top left, "17/09/07 12:04:ss", which is what a user can ask about.
    vid = ingested("bgslib_video02_highway.avi").video_id
    reads = rows(library_settings, vid, "SELECT t, text, y1 FROM ocr WHERE text LIKE '17/%'")
    assert len({round(r["t"]) for r in reads}) >= 5
    assert all(r["y1"] < 40 for r in reads)  # top of the 240-line frame
    described = rows(library_settings, vid, "SELECT description FROM timeline "
                                            "WHERE description LIKE '%On screen: \"17/%'")
    assert described


@pytest.mark.parametrize("name", ["mot15_TUD-Campus.mp4", "bgslib_video02_highway.avi"])
def test_clips_without_audio_ingest_with_empty_speech(ingested, library_settings, name):
    result = ingested(name)
    info = Library(library_settings.home).get(result.video_id).info()
    assert info["has_audio"] == 0
    assert info["tables"]["speech"] == 0 and info["tables"]["timeline"] > 0


def test_episodic_memory_has_several_scales(ingested, library_settings):
    result = ingested("autoeditor_example_speech.mp4")
    folder = Library(library_settings.home).get(result.video_id).folder
    scales = episodic.count_by_scale(folder)
    # 42 s at 2 s steps: fine steps, 10 s windows, and one whole-video summary.
    assert set(scales) == {"fine", "10s", "video"}
    assert scales["video"] == 1 and scales["10s"] == 5
    from backend.factory import embedder_for
    query = embedder_for(library_settings).embed(["the speaker says banana"])[0]
    hits = episodic.search(folder, query, scale="fine", k=3)
    assert any("banana" in h["text"].lower() for h in hits)


def test_window_summaries_count_the_people_in_them(ingested, library_settings):
    # TUD-Campus: several people per 10 s window, each listed once as #id.
    entry = Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id)
    windows = [e for e in episodic.rows(entry.folder) if e["scale"] != "fine"]
    listed = [len(re.findall(r"#\d+:", w["text"])) for w in windows]
    assert max(listed) > 1
    for window, n in zip(windows, listed):
        expected = "1 person appears" if n == 1 else f"{n} people appear"
        assert n == 0 or expected in window["text"], window["text"]


def test_reingest_is_instant_and_changes_nothing(ingested, library_settings):
    first = ingested("mot15_TUD-Campus.mp4")
    folder = Library(library_settings.home).get(first.video_id).folder
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*")}
    again = ingest(clip("mot15_TUD-Campus.mp4"), library_settings)
    assert again.cached and again.video_id == first.video_id
    assert again.counts == first.counts  # episodic included, as for a fresh ingest
    assert set(again.seconds) == {"hash"}
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*")} == before


def test_cli_json_commands(ingested, library_settings):
    vid = ingested("mot15_TUD-Campus.mp4").video_id
    env = dict(os.environ, MEMORYREEL_HOME=str(library_settings.home))

    def cli(*args):
        done = subprocess.run([sys.executable, "-m", "backend", *args, "--json"], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=300)
        return done.returncode, json.loads(done.stdout)

    code, payload = cli("ingest", str(clip("mot15_TUD-Campus.mp4")))
    assert code == 0 and payload["video_id"] == vid and payload["cached"]
    code, payload = cli("info")
    assert code == 0 and vid in [v["video_id"] for v in payload["videos"]]
    code, payload = cli("info", vid)
    assert code == 0 and payload["tables"]["instances"] > 0 and payload["duration"] == pytest.approx(2.84)
    code, payload = cli("sql", vid, "SELECT COUNT(*) AS n FROM instances")
    assert code == 0 and payload["columns"] == ["n"] and payload["rows"][0][0] > 0
    code, payload = cli("sql", vid, "DELETE FROM instances")
    assert code == 2 and "Only SELECT" in payload["error"]
    code, payload = cli("info", "nosuchvideo")
    assert code == 2 and payload["kind"] == "NotFoundError"
