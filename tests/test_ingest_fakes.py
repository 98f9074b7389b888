"""Ingest on fake models, in seconds: what each table and episodic memory hold, staging, failures.

The clips, their decoding (frames and audio), shot analysis, track cleaning, descriptions and
storage are real; the tracker, OCR, ASR, pose reader and embedder are the scripted ones of
tests/fakes.py, so every row can be traced to what a fake said. test_ingest.py ingests the same
clips with the real models.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace

import pytest

from backend import episodic
from backend.ingest import decode
from backend.ingest.pipeline import ingest
from backend.library import Library
from backend.sql_runner import run_query
from tests.conftest import clip, leftovers, settings_for
from tests.fakes import FakeEmbedder, FakeModels, FakeOCR, FakeSpeech, FakeTracker

SPEECH = "autoeditor_example_speech.mp4"  # has an audio track
SILENT = "mot15_TUD-Campus.mp4"
SAMPLE_RATE = 16_000


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """SPEECH ingested on fake models; what the library looked like while it was being built."""
    settings = settings_for(tmp_path_factory.mktemp("fake-library"), asr_enabled=True,
                            ocr_enabled=True, captioner="evidence")
    library = Library(settings.home)
    during = {}

    def look() -> None:  # the embed stage: every table is written, nothing is moved yet
        during["videos"] = [e.video_id for e in library.list()]
        during["staged"] = [p.name for p in (settings.home / ".staging").iterdir()
                            if (p / "video.db").is_file()]
    models = FakeModels(embedder=FakeEmbedder(on_embed=look))
    result = ingest(clip(SPEECH), settings, models=models)
    return settings, result, models, during


def _rows(settings, video_id: str, sql: str) -> list[dict]:
    entry = Library(settings.home).get(video_id)
    return run_query(entry.db_path, sql, timeout_s=5, max_rows=10_000).as_dicts()


def test_the_fakes_detections_become_two_people_crossing_left_to_right(built):
    settings, result, _, _ = built
    meta = decode.probe(clip(SPEECH))
    sampled = len(decode.sample_indices(meta, settings.track_fps))
    people = _rows(settings, result.video_id, "SELECT * FROM instances")
    assert [p["category"] for p in people] == ["person", "person"]
    assert all(p["frame_count"] == sampled and "left to right" in p["action"] for p in people)
    per_frame = _rows(settings, result.video_id,
                      "SELECT frame, COUNT(*) AS n, MIN(x1) AS x FROM detections GROUP BY frame "
                      "ORDER BY frame")
    assert len(per_frame) == sampled and {f["n"] for f in per_frame} == {2}
    assert per_frame[0]["x"] < per_frame[-1]["x"]


def test_speech_and_text_come_from_the_fakes_on_the_real_audio(built):
    settings, result, models, _ = built
    duration = decode.probe(clip(SPEECH)).duration
    # The ASR was given the clip's whole audio track, decoded for real.
    assert len(models.speech.heard) == 1
    assert abs(models.speech.heard[0] / SAMPLE_RATE - duration) < 0.5
    segment = FakeSpeech.SEGMENT
    assert _rows(settings, result.video_id, "SELECT t_start, t_end, text FROM speech") == [
        {"t_start": segment.t_start, "t_end": segment.t_end, "text": segment.text}]
    words = _rows(settings, result.video_id, "SELECT t_start, word FROM speech_words ORDER BY t_start")
    assert [(w["t_start"], w["word"]) for w in words] == [(t, w) for t, _, w in segment.words]
    ocr = _rows(settings, result.video_id, "SELECT t, text FROM ocr ORDER BY t")
    assert ocr and ocr[0]["t"] == 0.0 and {r["text"] for r in ocr} == {FakeOCR.TEXT}


def test_the_timeline_and_episodic_memory_say_what_the_fakes_saw(built):
    settings, result, models, _ = built
    timeline = _rows(settings, result.video_id, "SELECT * FROM timeline ORDER BY t_start")
    assert timeline[0]["t_start"] == 0.0
    assert timeline[-1]["t_end"] == pytest.approx(decode.probe(clip(SPEECH)).duration, abs=0.1)
    first = timeline[0]["description"]
    assert first.startswith("2 people visible") and f'"{FakeOCR.TEXT}"' in first
    assert "the blue kettle" in first and "the blue kettle" in timeline[0]["speech"]
    # Every episodic segment is a text the embedder was given, stored with its vector.
    folder = Library(settings.home).get(result.video_id).folder
    stored = sum(episodic.count_by_scale(folder).values())
    assert stored == len(models.embedder.texts) == result.counts["episodic"] > len(timeline)
    assert timeline[0]["description"] in models.embedder.texts
    names = json.loads(_rows(settings, result.video_id, "SELECT models FROM video")[0]["models"])
    assert (names["tracker"], names["speech"], names["ocr"], names["embedder"]) == (
        "fake-tracker", "fake-asr", "fake-ocr", "fake-embedder")


def test_the_video_is_built_in_staging_and_moved_in_whole(built):
    settings, result, _, during = built
    assert during == {"videos": [], "staged": [during["staged"][0]]}
    assert during["staged"][0].startswith(result.video_id)
    assert [e.video_id for e in Library(settings.home).list()] == [result.video_id]
    assert leftovers(settings) == []
    # Ingested again, it is found in the library; no model is asked anything.
    again = ingest(clip(SPEECH), settings, models=FakeModels(tracker=FakeTracker(fail_at=0)))
    assert again.cached and again.video_id == result.video_id and again.counts == result.counts


def _files(settings) -> dict[str, str]:
    """Every file of the library's videos, by path, with its content's hash."""
    videos = settings.home / "videos"
    return {str(p.relative_to(videos)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(videos.rglob("*")) if p.is_file()}


class _EmbedderDown(FakeEmbedder):
    def embed(self, texts):
        raise RuntimeError("the fake embedder failed")


@pytest.mark.parametrize("models, stage", [
    (lambda: FakeModels(tracker=FakeTracker(fail_at=5)), "tracker"),
    (lambda: FakeModels(embedder=_EmbedderDown()), "embedder")])
def test_a_model_failing_mid_ingest_leaves_the_library_as_it_was(built, tmp_path, models, stage):
    settings = settings_for(tmp_path / "home", asr_enabled=True, ocr_enabled=True,
                            captioner="evidence")
    shutil.copytree(built[0].home, settings.home)
    before = _files(settings)
    with pytest.raises(RuntimeError, match=f"the fake {stage} failed"):
        ingest(clip(SILENT), settings, models=models())
    assert _files(settings) == before and leftovers(settings) == []
    assert [e.video_id for e in Library(settings.home).list()] == [built[1].video_id]
    # Nothing half-done stands in the way: with working models the same file goes in.
    result = ingest(clip(SILENT), settings, models=FakeModels())
    assert not result.cached and result.counts["instances"] == 2
    assert len(Library(settings.home).list()) == 2


class _CrowdTracker(FakeTracker):
    """A crowd detector that sees `seen` people on the opening frames and `later` on the
    frames spread through the video."""

    name = "fake-crowd-tracker"
    gives_pose = False

    def __init__(self, seen: int, later: int = 0):
        super().__init__()
        self.seen, self.later = seen, later
        self.probed: list[int] = []

    def most_people(self, frames, imgsz: int) -> int:
        self.probed.append(len(frames))
        return self.seen if len(self.probed) == 1 else self.later

    def fit(self, frames, largest: int, smallest: int, later=None) -> int:
        return 1280  # as ingest fits it to a crowd's small people


@pytest.mark.parametrize("seen, later, used", [(16, 0, "fake-crowd-tracker"),
                                               (15, 0, "fake-tracker"),
                                               (4, 16, "fake-crowd-tracker"),
                                               (4, 15, "fake-tracker")])
def test_a_video_showing_a_crowd_is_tracked_by_the_crowd_detector(seen, later, used,
                                                                  library_settings, tmp_path):
    settings = replace(library_settings, home=tmp_path / "library")
    crowd = _CrowdTracker(seen, later)
    models = FakeModels(crowd_tracker=crowd)
    video_id = ingest(clip(SPEECH), settings, models=models).video_id
    names = json.loads(_rows(settings, video_id, "SELECT models FROM video")[0]["models"])
    assert names["tracker"] == used
    # The crowd detector gives no postures: the pose model reads them, once a second, at the
    # input size fitted to the crowd's people.
    assert (models.pose.reads > 0) == (used == "fake-crowd-tracker")
    assert set(models.pose.sizes) == ({1280} if used == "fake-crowd-tracker" else set())
    # The opening's three frames, then four spread through the clip only when it showed none.
    assert crowd.probed == ([3] if seen > 15 else [3, 4])
