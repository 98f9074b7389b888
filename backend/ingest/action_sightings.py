"""A tracked person on one sampled frame, the objects beside them, and the geometry the action
rules share (distances, boxes, arm reach): the records `actions.perceive` builds from detections
and every family of rules reads."""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from models import pose as kp_index
from models.types import Detection

SEEN = kp_index.SEEN


@dataclass
class Seen:
    """A person on one sampled frame, with what the rules need."""

    t: float
    frame: int
    box: tuple[float, float, float, float]
    kp: np.ndarray | None
    posture: str | None
    facing: str | None
    arm_raised: bool | None
    interpolated: bool

    @property
    def height(self) -> float:
        return max(self.box[3] - self.box[1], 1.0)

    @property
    def foot(self) -> tuple[float, float]:
        return (self.box[0] + self.box[2]) / 2, self.box[3]

    def joint(self, j: int) -> np.ndarray | None:
        return self.kp[j, :2] if self.kp is not None and self.kp[j, 2] >= SEEN else None

    def mid(self, a: int, b: int) -> np.ndarray | None:
        pa, pb = self.joint(a), self.joint(b)
        if pa is None or pb is None:
            return pa if pb is None else pb
        return (pa + pb) / 2

    @cached_property
    def torso(self) -> float:
        """Shoulders to hips in pixels; a third of the box height where they are not seen."""
        s = self.mid(kp_index.L_SHOULDER, kp_index.R_SHOULDER)
        h = self.mid(kp_index.L_HIP, kp_index.R_HIP)
        if s is not None and h is not None and np.linalg.norm(s - h) >= 1:
            return dist(s, h)
        return self.height / 3

    def wrists(self) -> list[np.ndarray]:
        return [w for w in (self.joint(kp_index.L_WRIST), self.joint(kp_index.R_WRIST))
                if w is not None]

    def head(self) -> np.ndarray | None:
        return self.joint(kp_index.NOSE) if self.joint(kp_index.NOSE) is not None else \
            self.mid(kp_index.L_EAR, kp_index.R_EAR)


class Track(list):
    """A person's sightings in time order, with their times for finding a window by bisection
    (a ten-minute track has 3,000 sightings: scanning it for every one of them is too slow)."""

    def __init__(self, sightings):
        super().__init__(sorted(sightings, key=lambda s: s.t))
        self.times = [s.t for s in self]

    def between(self, t0: float, t1: float) -> list[Seen]:
        """Sightings with t0 <= t < t1."""
        return self[bisect_left(self.times, t0 - 1e-9):bisect_left(self.times, t1 - 1e-9)]


@dataclass
class Thing:
    instance_id: int
    category: str
    box: tuple[float, float, float, float]

    @property
    def centre(self) -> np.ndarray:
        return np.array([(self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2])


@dataclass
class Support:
    """Frames where one rule held for one (instance, action, other), with a note of why."""

    times: list[float] = field(default_factory=list)
    note: str = ""


def sighting(index: int, t: float, d: Detection) -> Seen:
    p = d.pose
    kp = None if p is None or p.keypoints is None else np.asarray(p.keypoints, dtype=np.float32)
    return Seen(t, index, d.box, kp, p.posture if p else None, p.facing if p else None,
                p.arm_raised if p else None, d.confidence == 0)


def window(track: Track, k: int, seconds: float) -> list[Seen]:
    t = track[k].t
    return track.between(t - seconds / 2 - 1e-6, t + seconds / 2 + 2e-6)


def arm_reach(s: Seen) -> list[tuple[float, float] | None]:
    """(wrist-to-shoulder distance, wrist height above the shoulder) in torsos, for the left arm
    and the right; None for an arm whose shoulder or wrist is not seen."""
    out = []
    for sh, wr in ((kp_index.L_SHOULDER, kp_index.L_WRIST), (kp_index.R_SHOULDER, kp_index.R_WRIST)):
        a, b = s.joint(sh), s.joint(wr)
        out.append(None if a is None or b is None else
                   (dist(b, a) / s.torso, float(a[1] - b[1]) / s.torso))
    return out


def reach(s: Seen) -> list[tuple[float, float]]:
    """`arm_reach` of the arms seen."""
    return [a for a in arm_reach(s) if a is not None]


def ankles_y(s: Seen) -> float | None:
    ankles = [a[1] for a in (s.joint(kp_index.L_ANKLE), s.joint(kp_index.R_ANKLE)) if a is not None]
    return max(ankles) if ankles else None


def feet_y(s: Seen) -> float:
    ankles = ankles_y(s)
    return s.box[3] if ankles is None else ankles


def dist(a: np.ndarray, b: np.ndarray) -> float:
    # math.hypot: numpy's norm costs more than the rules themselves on two numbers.
    return math.hypot(float(a[0] - b[0]), float(a[1] - b[1]))


def grown_box(box, by: float):
    x1, y1, x2, y2 = box
    return x1 - by, y1 - by, x2 + by, y2 + by


def inside(p: np.ndarray, box) -> bool:
    return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]


def iou(a, b) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0
