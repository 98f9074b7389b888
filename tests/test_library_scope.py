"""Questions across the whole library, on real clips: the videos named and their times come from
each video's tables, by code, and a question that could be about one video never names another."""

from __future__ import annotations

import json

import pytest
import sqlite_utils

from backend.agent.library_tool import KindQuestion, kind_question
from backend.ask_library import LIBRARY, ask_library
from backend.cli import main
from backend.evaluation import library_workload
from backend.library import Library

CLIPS = ("mot15_TUD-Campus.mp4", "bgslib_video02_highway.avi", "autoeditor_example_speech.mp4",
         "intel_bottle-detection.mp4")


@pytest.fixture(scope="module")
def library(ingested, library_settings):
    ids = {name: ingested(name).video_id for name in CLIPS}
    return library_settings, ids


def _span(settings, video_id: str, category: str) -> tuple[float, float]:
    db = sqlite_utils.Database(Library(settings.home).get(video_id).db_path)
    row = next(db.query("SELECT MIN(first_seen) AS a, MAX(last_seen) AS b FROM instances "
                        "WHERE category = ?", [category]))
    return row["a"], row["b"]


@pytest.mark.parametrize("question, expected", [
    ("In which clip is there a bus?", KindQuestion("bus", "count_distinct", ">=", 1)),
    ("Which clips show two people at once?", KindQuestion("person", "most_at_once", ">=", 2)),
    ("Which videos have more than 3 cars at the same time?",
     KindQuestion("car", "most_at_once", ">", 3)),
    ("Which clip shows a lorry?", KindQuestion("truck", "count_distinct", ">=", 1)),
    ("Which clip mentions convenience?", None),
])
def test_what_a_library_question_asks_of_each_video(question, expected):
    assert kind_question(question) == expected


def test_a_bus_is_found_in_the_highway_clip_only_with_its_time(library):
    settings, ids = library
    answer = ask_library("In which clip is there a bus?", settings)
    assert answer.video_id == LIBRARY and answer.answered
    highway = ids["bgslib_video02_highway.avi"]
    assert [v["video_id"] for v in answer.videos] == [highway]
    start, end = _span(settings, highway, "bus")
    assert start <= answer.videos[0]["times"][0] <= end
    assert highway in answer.answer and "bgslib_video02_highway.avi" in answer.answer
    assert answer.usage.llm_calls == 0


def _most_people_at_once(settings, video_id: str) -> int:
    db = sqlite_utils.Database(Library(settings.home).get(video_id).db_path)
    return next(db.query("SELECT COALESCE(MAX(n), 0) AS n FROM (SELECT COUNT(*) AS n FROM "
                         "detections d JOIN instances i ON i.id = d.instance_id WHERE "
                         "i.category = 'person' GROUP BY d.frame)"))["n"]


def test_people_at_once_names_the_crowded_clips(library):
    settings, ids = library
    answer = ask_library("Which clips show three people at once?", settings)
    crowded = {v.video_id for v in Library(settings.home).list()
               if _most_people_at_once(settings, v.video_id) >= 3}
    assert ids["mot15_TUD-Campus.mp4"] in crowded
    assert {v["video_id"] for v in answer.videos} == crowded


def test_a_kind_no_clip_shows_names_no_video(library):
    settings, _ = library
    answer = ask_library("In which clip is there a giraffe?", settings)
    assert answer.videos == [] and answer.answer.startswith("None of the")


def test_a_spoken_word_names_the_clip_that_says_it_and_when(library):
    settings, ids = library
    speech = ids["autoeditor_example_speech.mp4"]
    db = sqlite_utils.Database(Library(settings.home).get(speech).db_path)
    said = next(db.query("SELECT t_start, t_end FROM speech WHERE text LIKE '%convenience%'"))
    answer = ask_library("Which video mentions convenience?", settings)
    assert [v["video_id"] for v in answer.videos] == [speech]
    assert said["t_start"] <= answer.videos[0]["times"][0] <= said["t_end"]


def test_the_generated_library_workload_names_no_wrong_video(library, tmp_path):
    settings, _ = library
    result = library_workload.run(settings, tmp_path / "library.csv")
    assert result["questions"] >= 20
    assert result["wrong_videos_named"] == 0
    assert set(result["needs"]) == {"kind", "at once", "speech"}


def test_ask_all_videos_from_the_command_line(library, monkeypatch, capsys):
    settings, ids = library
    monkeypatch.setenv("MEMORYREEL_HOME", str(settings.home))
    assert main(["ask", "--all-videos", "Which clips show a bottle?", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [v["video_id"] for v in payload["videos"]] == [ids["intel_bottle-detection.mp4"]]
    assert main(["ask", "--all-videos", ids["mot15_TUD-Campus.mp4"], "how many?", "--json"]) == 2


def test_who_does_something_names_the_clips_where_someone_does_it(library):
    """'Which clips show people walking?': the clips whose actions table holds walking, with
    the time someone starts; riding a horse, which no clip shows, names none."""
    settings, ids = library
    walked = {}
    for video in Library(settings.home).list():
        db = sqlite_utils.Database(video.db_path)
        rows = list(db.query("SELECT MIN(t_start) AS t FROM actions WHERE action = 'walking' "
                             "HAVING COUNT(*) > 0"))
        if rows:
            walked[video.video_id] = rows[0]["t"]
    assert ids["mot15_TUD-Campus.mp4"] in walked
    answer = ask_library("Which clips show people walking?", settings)
    assert {v["video_id"] for v in answer.videos} == set(walked)
    assert all(v["times"][0] == pytest.approx(walked[v["video_id"]], abs=0.01) for v in answer.videos)
    assert answer.usage.llm_calls == 0
    none = ask_library("Who is riding a horse?", settings)
    assert none.videos == [] and none.answer.startswith("None of the")
