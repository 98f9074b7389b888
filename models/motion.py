"""Moving objects of any kind, for a static camera: OpenCV background subtraction, blobs, ByteTrack.

No detector that knows cars, bottles or bicycles ships on PyPI, but on a fixed camera anything
that moves stands out from the background. MOG2 models the background (shadows marked apart and
dropped), the foreground mask is cleaned and its connected blobs become boxes, and the same
ByteTrack the person tracker uses links them over time. A blob that overlaps a person box is the
person, not a new object, so it is left out. Categories are never invented: every track is a
"moving object", and backend/ measures its size and path. Its colour is measured here, over the
blob's own foreground pixels (the median, so dark glass and shadowed edges do not pull a white
car to grey), since only here is it known which pixels are the object.

When the camera itself moves, background subtraction has nothing to stand on: a frame the
caller says the camera moved into (`camera_moved`, from the scene analyser's fit of the whole
picture's motion) gives nothing and starts the background over once the camera stands still; a
frame most of which changes at once counts as moved too. When moves fill much of the video the
tracker says so (`camera_moving`).

Usage:
    motion = MotionTracker()
    for frame in frames:                                  # H x W x 3 uint8 RGB
        moving = motion.track(frame, people=[d.box for d in person_detections])
    motion.camera_moving                                  # True once the camera was seen moving
"""

from __future__ import annotations

import numpy as np

from models.types import Detection

CATEGORY = "moving object"
_WORK_WIDTH = 320          # frames are shrunk to this width: blobs need no detail
_HISTORY = 50              # frames of background memory: 10 s at 5 sampled fps
_MIN_AREA = 0.002          # of the frame: smaller blobs are noise, leaves, compression
_MAX_AREA = 0.5            # larger blobs are a lighting change or a camera move
_PERSON_OVERLAP = 0.3      # a blob this much inside a person box is that person
_CAMERA_MOVING = 0.45      # foreground share of the frame that means the camera moved
_MOVING_FRAMES = 0.3       # share of frames like that before the whole video counts as moving
_WARMUP = 3                # first frames: the background model is still being learnt
_CHANGED = 30              # a channel this far from the scene (0-255): the object, not the road
_MIN_CHANGED = 0.15        # share of the blob that must differ before only those pixels count
_REFERENCE_RATE = 0.05     # the scene reference follows light changes over ~20 sampled frames
_CLUSTERS = 3              # colour clusters of a blob: e.g. paint, glass, shade


class MotionTracker:
    """Tracks moving blobs frame by frame; `reset()` before each video."""

    name = "OpenCV MOG2 background subtraction + ByteTrack"

    def __init__(self):
        import cv2

        self._cv2 = cv2
        self.reset()

    def reset(self) -> None:
        from ultralytics.trackers.byte_tracker import BYTETracker
        from ultralytics.utils import IterableSimpleNamespace

        self._tracker = BYTETracker(IterableSimpleNamespace(
            tracker_type="bytetrack", track_high_thresh=0.3, track_low_thresh=0.1,
            new_track_thresh=0.4, track_buffer=10, match_thresh=0.9, fuse_score=False))
        self._frames = 0
        self._moving_frames = 0
        self._reference = None  # the scene without moving objects, for their colours
        self._learnt = 0        # frames the current background model has seen

    @property
    def camera_moving(self) -> bool:
        return self._frames > _WARMUP and self._moving_frames > _MOVING_FRAMES * (self._frames - _WARMUP)

    def track(self, frame_rgb: np.ndarray, people: list[tuple[float, float, float, float]] = (),
              camera_moved: bool = False) -> list[Detection]:
        """Moving blobs in this frame, tracked; boxes in source pixels; none while the
        background is being learnt, in a frame the camera moved into, or once the camera is
        known to move through much of the video."""
        cv2 = self._cv2
        height, width = frame_rgb.shape[:2]
        scale = _WORK_WIDTH / width if width > _WORK_WIDTH else 1.0
        small = cv2.resize(frame_rgb, (round(width * scale), round(height * scale)),
                           interpolation=cv2.INTER_AREA) if scale < 1 else frame_rgb
        self._frames += 1
        if camera_moved:
            # The background learnt so far is of another view: learn the new one from scratch.
            self._moving_frames += 1
            self._learnt = 0
            self._reference = None
            return []
        if self._learnt == 0:
            self._subtractor = cv2.createBackgroundSubtractorMOG2(
                history=_HISTORY, varThreshold=25, detectShadows=True)
        mask = self._subtractor.apply(cv2.GaussianBlur(small, (5, 5), 0))
        self._learnt += 1
        if self._reference is None:
            self._reference = small.astype(np.float32)
        if self._learnt <= _WARMUP:
            return []
        foreground = mask > 200  # 127 marks shadows
        if foreground.mean() > _CAMERA_MOVING:
            self._moving_frames += 1
        if self.camera_moving:
            return []
        mask = cv2.morphologyEx(foreground.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
        count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        area = mask.shape[0] * mask.shape[1]
        blobs = []
        for label, (x, y, w, h, pixels) in enumerate(stats[1:count], start=1):
            if not (_MIN_AREA * area <= w * h <= _MAX_AREA * area):
                continue
            box = (x / scale, y / scale, (x + w) / scale, (y + h) / scale)
            if not any(_inside(box, person) > _PERSON_OVERLAP for person in people):
                blobs.append((label, x, y, w, h, pixels, box))
        changed = self._changed(small, foreground) if blobs else None
        cv2.accumulateWeighted(small.astype(np.float32), self._reference, _REFERENCE_RATE,
                               mask=(mask == 0).astype(np.uint8))
        boxes, colours = [], []
        for label, x, y, w, h, pixels, box in blobs:
            # Confidence: how solid the blob is (a car fills its box; noise is sparse).
            boxes.append((*box, min(1.0, 0.3 + pixels / (w * h)), 0))
            colours.append(_blob_colour(small[y:y + h, x:x + w], labels[y:y + h, x:x + w] == label,
                                        foreground[y:y + h, x:x + w], changed[y:y + h, x:x + w]))
        return self._link(boxes, colours, (height, width))

    def _changed(self, small: np.ndarray, foreground: np.ndarray) -> np.ndarray:
        """Foreground pixels that differ from the scene before this frame. MOG2 also marks road
        that only changed brightness (the camera's exposure follows a white car) or that a car
        uncovered, and that road has the road's colour, not the car's. Exposure is undone with
        the whole frame's median gain. Only frames with a blob to colour need it: it was a
        third of the tracker's time on frames with none."""
        gain = np.median((small + 1.0) / (self._reference + 1.0), axis=(0, 1))
        return foreground & (np.abs(small - self._reference * gain).max(axis=2) > _CHANGED)

    def _link(self, boxes: list[tuple], colours: list[tuple], shape: tuple[int, int]) -> list[Detection]:
        from ultralytics.engine.results import Boxes

        data = np.array(boxes, dtype=np.float32).reshape(-1, 6)
        tracks = self._tracker.update(Boxes(data, shape).numpy())
        # Each row ends with the index of the blob the track matched in this frame: report that
        # blob's measured box and colour. The Kalman filter's own box drifts off the object while
        # it enters or leaves the frame (a car 200 px wide got a box the frame's full width).
        return [Detection(track_id=int(t[4]), category=CATEGORY,
                          box=tuple(float(v) for v in boxes[int(t[7])][:4]),
                          confidence=float(t[5]), colour=colours[int(t[7])])
                for t in tracks]


def _blob_colour(image: np.ndarray, blob: np.ndarray, foreground: np.ndarray,
                 changed: np.ndarray) -> tuple[float, float, float]:
    """Median RGB of the blob's pixels that differ from the scene. The blob was closed over
    small gaps (background between an object's parts) and holds ghosts; an object coloured
    like the scene has too few such pixels, and then its raw foreground pixels are used."""
    pixels = image[blob & changed]
    if len(pixels) < _MIN_CHANGED * blob.sum():
        pixels = image[blob & foreground] if (blob & foreground).any() else image[blob]
    return _dominant(pixels)


def _dominant(pixels: np.ndarray) -> tuple[float, float, float]:
    """Centre of the largest of three colour clusters: paint, not the mean of paint and glass."""
    import cv2

    pixels = pixels.astype(np.float32)
    if len(pixels) < 3 * _CLUSTERS:
        return tuple(float(v) for v in np.median(pixels, axis=0))
    # Start from brightness terciles rather than random centres, so the result is repeatable.
    order = np.argsort(pixels.sum(axis=1), kind="stable")
    labels = np.empty(len(pixels), dtype=np.int32)
    labels[order] = np.arange(len(pixels)) * _CLUSTERS // len(pixels)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    _, labels, centres = cv2.kmeans(pixels, _CLUSTERS, labels.reshape(-1, 1), criteria, 1,
                                    cv2.KMEANS_USE_INITIAL_LABELS)
    largest = np.bincount(labels.ravel(), minlength=_CLUSTERS).argmax()
    return tuple(float(v) for v in centres[largest])


def _inside(box, other) -> float:
    """Share of `box`'s area that lies inside `other`."""
    x1, y1 = max(box[0], other[0]), max(box[1], other[1])
    x2, y2 = min(box[2], other[2]), min(box[3], other[3])
    overlap = max(0.0, x2 - x1) * max(0.0, y2 - y1)
    return overlap / max(1e-6, (box[2] - box[0]) * (box[3] - box[1]))
