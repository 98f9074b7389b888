"""A crowd seen from above (MOT16-04, every 5th frame: 40-56 people on a night street), through the
real pipeline: tracked by the crowd detector, and counted as an estimate that says so."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend.agent.queries import TypedQuery, VideoTables, run
from backend.evaluation import tracking
from backend.ingest.pipeline import ingest
from backend.library import Library
from tests.conftest import VIDEOS

SCENE = VIDEOS / "ground-truth-wide" / "MOT16-04-every5"


@pytest.fixture(scope="module")
def crowd(library_settings, tmp_path_factory):
    if not SCENE.is_dir():
        pytest.fail(f"{SCENE} is missing: the shared person truth holds it")
    # People only: speech, text, moving and everyday objects change no count of people.
    settings = replace(library_settings, home=tmp_path_factory.mktemp("crowd"), asr_enabled=False,
                       ocr_enabled=False, motion_enabled=False, objects_enabled=False)
    sequence = tracking.sequence_at(SCENE)
    entry = Library(settings.home).get(ingest(sequence.video, settings).video_id)
    return VideoTables(entry.db_path), tracking.read_ground_truth(sequence), sequence


def _count(tables, question: str, operation: str = "in_view"):
    return run(TypedQuery(operation=operation, target="person", time="", until="", words=""),
               question, tables)


def test_a_crowd_is_tracked_by_the_crowd_detector_and_counted_as_an_estimate(crowd):
    tables, truth, sequence = crowd
    tracker = tables.video["models"]["tracker"]
    assert tracker.startswith("yolo11n.pt") and tracker.endswith("for crowds"), tracker
    assert tables.conditions.split(", ")[1] == "crowd"
    for question, frame in (("how many people are in view at the start?", 0),
                            ("how many people are in view at 20 seconds?", round(20 * sequence.fps))):
        result = _count(tables, question)
        there = len(truth[frame])
        # Measured: 53 there at the start and 51 at 20 s; the detector sees about two thirds of
        # them, and the crowd factor brings the answer within a few people.
        assert abs(int(result.value) - there) <= 0.2 * there, (result.value, there, result.text)
        assert "about" in result.text.lower() and "estimate" in result.text
    most = _count(tables, "at most how many people are in view at once?", "most_at_once")
    true_most = max(len(rows) for rows in truth.values())
    assert abs(int(most.value) - true_most) <= 0.2 * true_most and "about" in most.text.lower()


def test_the_pose_model_reads_the_crowd_at_the_size_its_people_need(crowd):
    """The crowd detector gives no joints: the pose model reads them once a second, at the input
    size fitted to this scene's small people rather than at its own; and the rules that read
    them say nothing the street does not show."""
    tables, _, _ = crowd
    assert tables.video["models"]["detector_imgsz"] == 1280
    total, read, people = tables.rows(
        "SELECT count(*) AS n, count(d.posture) AS posed, count(DISTINCT CASE WHEN d.posture "
        "IS NOT NULL THEN d.instance_id END) AS people FROM detections d JOIN instances i ON "
        "i.id = d.instance_id WHERE i.category = 'person' AND abs(d.t - round(d.t)) < 1e-6"
    )[0].values()
    # Measured: 713 of 1,269 sightings on those frames, of 68 people (at 640 px: 107, 16).
    assert read >= 0.4 * total and people >= 40, (read, total, people)
    # The night street's people walk or stand. Read once a second, a walker's joints cannot
    # show a jump (misread ankles had made 18 of them jump), and seen steeply from above,
    # walking away is no climb (12 climbs had been read).
    said = tables.rows("SELECT action, count(*) AS n FROM actions WHERE action IN "
                       "('jumping', 'climbing') GROUP BY action")
    assert said == [], said


def test_the_crowd_detector_can_be_turned_off_and_a_missing_one_is_said(tmp_path, caplog):
    from backend import config
    from backend.factory import ModelSet

    assert ModelSet(config.load({"MEMORYREEL_CROWD_DETECTOR": "off"})).crowd_tracker is None
    # Never fetched (an empty cache): ingest keeps the person detector and the log says why.
    empty = config.load({"MEMORYREEL_CACHE": str(tmp_path)})
    assert ModelSet(empty).crowd_tracker is None
    assert "never fetched" in caplog.text and "python -m backend setup" in caplog.text


def test_the_crowd_tracker_keeps_the_faint_boxes_of_small_people(library_settings):
    """Small people in a crowd score under the thresholds that keep phantoms out of scenes of a
    few large people; the crowd tracker's association takes them (MOT16-02, a square)."""
    import decord
    import yaml

    from backend.factory import ModelSet, _tracker, _wheel_or_path
    from models.tracker import CROWD_ASSOCIATION

    crowd = ModelSet(library_settings).crowd_tracker
    assert crowd is not None, "the crowd detector was never fetched: run `python -m backend setup`"
    s = library_settings
    weights = _wheel_or_path(s.crowd_detector, s.cache_dir, "MEMORYREEL_CROWD_DETECTOR")
    plain = _tracker(weights, s.detector_imgsz, s.detector_conf,
                     s.detector_nms_iou, s.device, s.detector_runtime, str(s.cache_dir), False,
                     s.tracker, None)
    config = yaml.safe_load(open(crowd.tracker_cfg))
    assert {k: config[k] for k in CROWD_ASSOCIATION} == CROWD_ASSOCIATION
    scene = tracking.sequence_at(VIDEOS / "ground-truth-wide" / "MOT16-02")
    video = decord.VideoReader(str(scene.video))
    tracked = {}
    for name, tracker in (("crowd", crowd), ("plain", plain)):
        tracker.reset()
        tracker.imgsz = 1280  # as ingest fits it for this scene's small people
        for i in range(0, 30, 6):  # a second at 5 sampled fps: tracks confirmed
            people = [d for d in tracker.track(video[i].asnumpy())
                      if d.category == "person" and not d.first_sighting]
        tracked[name] = len(people)
        tracker.reset()
    # Measured: 13 against 9 of the 29 people in view on the last of those frames.
    assert tracked["crowd"] >= tracked["plain"] + 2, tracked
