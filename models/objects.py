"""Everyday objects of the COCO kinds, detected by a COCO detector (models/coco.py: YOLO26n by
default) and tracked by ByteTrack.

People are left to the person detector (models/tracker.py), whose keypoints give posture; this
tracker reports the other 79 kinds. The association is ultralytics' ByteTrack fed with the
detector's boxes, so objects follow the same rules as people. A track's kind is the one with the
most score over its sightings (`settle_kinds`): a detector calls a bottle a vase now and then,
and a vehicle a car or a truck from one frame to the next.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from models import coco
from models.types import Detection

# Set for NanoDet, whose scores run lower than YOLO's (a real car on the highway clip scored
# 0.35-0.7), and kept for YOLO26n: the object tests on the sample clips hold with both.
# A box this sure may continue a track (ByteTrack's second, low-score association); one of
# `_HIGH` may also match first, and a new track needs `_NEW_TRACK`.
DETECT_CONF = 0.25
_HIGH = 0.35
_NEW_TRACK = 0.4
# Sampled frames a lost object stays re-findable (ultralytics counts processed frames).
_BUFFER = 6
# Boxes are matched enlarged this many times about their centres (the buffered IoU of C-BIoU,
# Yang et al. 2023): at 5 sampled frames a second a car near the camera moves most of its own
# length between samples, so its boxes barely overlap and every sighting started a new track,
# which the association confirms only when the next one overlaps (highway clip: the near cars
# were never tracked at all).
_BUFFERED = 2.0


class CocoTracker:
    """Detect and track the non-person COCO kinds in the successive frames of one video."""

    def __init__(self, detector: "coco.UltralyticsDetector | coco.NanoDet"):
        self.detector = detector
        self.name = f"{self.detector.name} + ByteTrack"
        self.categories = {i: c for i, c in enumerate(coco.CLASSES) if c != "person"}
        self._tracker = None

    def track(self, frame_rgb: np.ndarray) -> list[Detection]:
        from ultralytics.engine.results import Boxes

        boxes, scores, classes = self.detector.detect(frame_rgb, DETECT_CONF)
        wanted = np.array([int(c) in self.categories for c in classes], dtype=bool)
        data = np.concatenate([_scaled(boxes[wanted], _BUFFERED), scores[wanted, None],
                               classes[wanted, None]], axis=1) if len(boxes) else np.zeros((0, 6))
        tracked = self._association().update(Boxes(data.astype(np.float32), frame_rgb.shape[:2]))
        return [Detection(track_id=int(row[4]), category=self.categories[int(row[6])],
                          box=tuple(float(v) for v in _scaled(row[None, :4], 1 / _BUFFERED)[0]),
                          confidence=float(row[5]))
                for row in tracked]

    def _association(self):
        # fuse_score off: ByteTrack would weigh each overlap by the box's score, and at a score
        # of 0.4 a car's box overlapping its track by 80 % then scores like a stranger's (measured on
        # the highway clip: 1-3 of 7-8 cars a frame kept a track, against 4-6 without it).
        if self._tracker is None:
            from ultralytics.trackers.byte_tracker import BYTETracker
            from ultralytics.utils import IterableSimpleNamespace

            self._tracker = BYTETracker(IterableSimpleNamespace(
                track_high_thresh=_HIGH, track_low_thresh=DETECT_CONF, new_track_thresh=_NEW_TRACK,
                track_buffer=_BUFFER, match_thresh=0.9, fuse_score=False))
        return self._tracker

    def reset(self) -> None:
        """Forget the tracks of the previous video."""
        self._tracker = None


def _scaled(boxes: np.ndarray, factor: float) -> np.ndarray:
    centre = (boxes[:, :2] + boxes[:, 2:]) / 2
    half = (boxes[:, 2:] - boxes[:, :2]) / 2 * factor
    return np.concatenate([centre - half, centre + half], axis=1)


def settle_kinds(detections: list[Detection]) -> dict[int, str]:
    """Each track's kind: the one its sightings' scores add up to most."""
    votes: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for d in detections:
        votes[d.track_id][d.category] += d.confidence
    return {track: max(kinds, key=kinds.get) for track, kinds in votes.items()}
