"""Shots, camera motion, colours, brightness and motion level of the sampled frames.

The person detector and background subtraction say nothing about the picture itself: where the
video cuts, whether the camera pans or zooms, what colours fill the frame, whether it is dark.
These are cheap to measure on frames shrunk to a thumbnail, in the same pass that tracks objects:
- shot boundaries: PySceneDetect's AdaptiveDetector (a content score against a rolling average,
  so that a camera move is not taken for a cut), fed the sampled frames;
- camera motion: sparse Lucas-Kanade flow between consecutive sampled frames and a RANSAC
  similarity fit (OpenCV), so objects moving through the picture do not count as the camera;
- motion level: the share of the picture that still changes once that camera motion is undone;
- colours: k-means over the thumbnail's pixels (the centres and their shares; backend/ names
  them); brightness: the mean luma.

Usage:
    scenes = SceneAnalyser(fps=meta.fps)
    for index, t, frame in sampled_frames:        # H x W x 3 uint8 RGB
        scenes.add(index, t, frame)
    scenes.looks, scenes.cuts                     # one FrameLook per frame; cut times in seconds
"""

from __future__ import annotations

import numpy as np

from models.types import FrameLook

_WORK_WIDTH = 160          # flow, change and cut scores: shapes, not detail
_COLOUR_SIZE = (32, 18)    # pixels clustered for colours (width, height)
_COLOURS = 4               # k-means clusters per frame
_MIN_POINTS = 12           # tracked corners below this: no camera estimate (a flat picture)
_MIN_INLIERS = 0.5         # share of corners the camera fit must explain
_MIN_CELLS = 5             # of a 3 x 3 grid, cells the fitted corners must reach: a car crossing
                           # a flat road holds all the corners, and its motion is not the camera's
_CHANGE_LEVEL = 25         # grey levels a pixel must change by to count as moving
_MIN_SHOT_SECONDS = 1.0    # a cut closer than this to the last one is a flash, not a new shot
# Shift of the picture between sampled frames (working pixels) or log change of its scale that
# means the camera moved: still cameras of the shared clips stay under 1.8 px and 0.025 (people
# and bottles moving in front of them pull the fit), a pan of 9 % of the width a second at
# 5 sampled fps gives 3.5-4 px.
_MOVED_PX = 2.5
_MOVED_SCALE = 0.04


class SceneAnalyser:
    """Measures every sampled frame of one video; a fresh one per video."""

    name = "PySceneDetect AdaptiveDetector + OpenCV Lucas-Kanade camera motion + k-means colours"

    def __init__(self, fps: float):
        import cv2
        from scenedetect import AdaptiveDetector

        self._cv2, self._fps = cv2, float(fps)  # scenedetect refuses an int rate
        self._detector = AdaptiveDetector(min_scene_len=max(1, round(_MIN_SHOT_SECONDS * fps)))
        self._previous: tuple[float, np.ndarray] | None = None
        self.looks: list[FrameLook] = []
        self.cuts: list[float] = []
        self.camera_moved = False  # between the last two frames added, as far as can be told

    def add(self, index: int, t: float, frame_rgb: np.ndarray) -> None:
        cv2 = self._cv2
        height, width = frame_rgb.shape[:2]
        small = cv2.resize(frame_rgb, (_WORK_WIDTH, max(8, round(height * _WORK_WIDTH / width))),
                           interpolation=cv2.INTER_AREA)
        self._find_cuts(index, small)
        grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY), (3, 3), 0)
        pan = tilt = zoom = changed = None
        self.camera_moved = False
        if self._previous is not None:
            before_t, before = self._previous
            fit = self._camera(before, grey)
            changed = self._changed(before, grey, fit)
            if fit is not None and t > before_t:
                pan, tilt, zoom = _rates(fit, grey.shape, t - before_t)
                self.camera_moved = _moved(fit, grey.shape)
        self._previous = (t, grey)
        self.looks.append(FrameLook(t=t, pan=pan, tilt=tilt, zoom=zoom, changed=changed,
                                    luma=float(grey.mean()), colours=self._colours(frame_rgb)))

    def _find_cuts(self, index: int, small_rgb: np.ndarray) -> None:
        from scenedetect import FrameTimecode

        bgr = self._cv2.cvtColor(small_rgb, self._cv2.COLOR_RGB2BGR)
        found = self._detector.process_frame(FrameTimecode(index, fps=self._fps), bgr)
        self.cuts += [round(cut.seconds, 3) for cut in found]

    def _camera(self, before: np.ndarray, after: np.ndarray) -> np.ndarray | None:
        """The similarity transform (2 x 3) that moves `before` onto `after`, or None when the
        picture has too little texture, or too little of it moves together, to tell."""
        cv2 = self._cv2
        corners = cv2.goodFeaturesToTrack(before, maxCorners=150, qualityLevel=0.01, minDistance=5)
        if corners is None or len(corners) < _MIN_POINTS:
            return None
        moved, status, _ = cv2.calcOpticalFlowPyrLK(before, after, corners, None, winSize=(15, 15),
                                                    maxLevel=3)
        found = status.reshape(-1) == 1
        if found.sum() < _MIN_POINTS:
            return None
        fit, inliers = cv2.estimateAffinePartial2D(corners[found], moved[found], method=cv2.RANSAC,
                                                   ransacReprojThreshold=1.0)
        if fit is None or inliers.sum() < max(_MIN_POINTS, _MIN_INLIERS * found.sum()):
            return None
        height, width = before.shape
        fitted = corners[found].reshape(-1, 2)[inliers.reshape(-1) == 1]
        cells = {(int(3 * x / width), int(3 * y / height)) for x, y in fitted}
        return fit if len(cells) >= _MIN_CELLS else None

    def _changed(self, before: np.ndarray, after: np.ndarray, fit: np.ndarray | None) -> float:
        """Share of the picture that changes once the camera's own motion is undone."""
        cv2 = self._cv2
        height, width = after.shape
        if fit is None:
            warped, valid = before, np.ones_like(before, dtype=bool)
        else:
            warped = cv2.warpAffine(before, fit, (width, height))
            # Pixels the warp brought in from outside the old frame are not motion.
            valid = cv2.warpAffine(np.ones_like(before), fit, (width, height)) > 0
        moving = (cv2.absdiff(after, warped) > _CHANGE_LEVEL) & valid
        return float(moving.sum() / max(1, valid.sum()))

    def _colours(self, frame_rgb: np.ndarray) -> tuple[tuple[tuple[int, int, int], float], ...]:
        """The frame's main colours: k-means centres (RGB) with the share of pixels in each."""
        cv2 = self._cv2
        pixels = cv2.resize(frame_rgb, _COLOUR_SIZE, interpolation=cv2.INTER_AREA)
        pixels = pixels.reshape(-1, 3).astype(np.float32)
        cv2.setRNGSeed(0)  # the same frame gives the same colours
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
        _, labels, centres = cv2.kmeans(pixels, _COLOURS, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
        shares = np.bincount(labels.reshape(-1), minlength=_COLOURS) / len(pixels)
        return tuple((tuple(int(round(c)) for c in centre), round(float(share), 3))
                     for centre, share in sorted(zip(centres, shares), key=lambda cs: -cs[1])
                     if share > 0)


def _moved(fit: np.ndarray, shape: tuple[int, int]) -> bool:
    height, width = shape
    centre = np.array([width / 2, height / 2, 1.0])
    shift = float(np.hypot(*(fit @ centre - centre[:2])))
    scale = float(np.hypot(fit[0, 0], fit[1, 0]))
    return shift >= _MOVED_PX or abs(np.log(max(scale, 1e-6))) >= _MOVED_SCALE


def _rates(fit: np.ndarray, shape: tuple[int, int], seconds: float) -> tuple[float, float, float]:
    """(pan, tilt, zoom) per second: how far the picture's centre moves, as a share of the frame
    width (right +) and height (down +), and the log of its change of scale (growing +)."""
    height, width = shape
    centre = np.array([width / 2, height / 2, 1.0])
    dx, dy = fit @ centre - centre[:2]
    scale = float(np.hypot(fit[0, 0], fit[1, 0]))
    return (float(dx / width / seconds), float(dy / height / seconds),
            float(np.log(max(scale, 1e-6)) / seconds))
