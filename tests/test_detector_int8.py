"""MEMORYREEL_DETECTOR_PRECISION=int8: the person detector quantised once, calibrated on real
frames, finds the same people as the float export."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import clip


def _tracker(cache_dir: Path, precision: str, calibration: Path):
    from backend.config import load
    from models.tracker import Tracker

    settings = load()
    return Tracker(weights=settings.detector_weights, imgsz=settings.detector_imgsz,
                   conf=settings.detector_conf, iou=settings.detector_nms_iou, runtime="onnx",
                   cache_dir=cache_dir, precision=precision, calibration=calibration)


@pytest.fixture(scope="module")
def calibration(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("calibration")  # one short clip: a quick calibration
    (folder / "campus.mp4").symlink_to(clip("mot15_TUD-Campus.mp4"))
    return folder


@pytest.fixture(scope="module")
def trackers(tmp_path_factory, calibration):
    cache = tmp_path_factory.mktemp("detector-cache")
    return _tracker(cache, "fp32", calibration), _tracker(cache, "int8", calibration)


def _iou(a, b) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union else 0.0


def test_int8_finds_the_same_people_as_float_on_real_frames(trackers):
    import decord

    fp32, int8 = trackers
    compared = 0
    for name, frames in (("intel_one-by-one-person-detection.mp4", (150, 600, 1100)),
                         ("mot15_TUD-Stadtmitte.mp4", (20, 100))):
        reader = decord.VideoReader(str(clip(name)))
        for i in frames:
            frame = reader[i].asnumpy()
            want = sorted(fp32.track(frame), key=lambda d: d.box)
            got = sorted(int8.track(frame), key=lambda d: d.box)
            assert abs(len(got) - len(want)) <= max(1, len(want) // 10), (name, i, got, want)
            matched = [max((_iou(g.box, w.box) for g in got), default=0.0) for w in want]
            assert sum(m > 0.8 for m in matched) >= 0.9 * len(want), (name, i, matched)
            compared += len(want)
        fp32.reset(), int8.reset()
    assert compared >= 10  # people were in those frames: the comparison compared something


def test_int8_model_is_cached_beside_the_float_export(trackers):
    fp32, int8 = trackers
    assert int8.weights_path.parent == fp32.weights_path.parent
    assert int8.weights_path.name.startswith(fp32.weights_path.stem + "-int8-")
    assert int8.runtime == "onnx int8" and "INT8" in int8.name


def test_without_calibration_videos_the_float_model_runs(tmp_path, trackers):
    fp32, _ = trackers
    cache = fp32.weights_path.parent.parent
    empty = tmp_path / "no-videos"
    empty.mkdir()
    # A fresh export key would export again: reuse the module's cache, minus its INT8 file.
    for made in cache.glob("detector-onnx/*-int8-*.onnx"):
        made.rename(made.with_suffix(".kept"))
    try:
        tracker = _tracker(cache, "int8", empty)
    finally:
        for kept in cache.glob("detector-onnx/*.kept"):
            kept.rename(kept.with_suffix(".onnx"))
    assert tracker.runtime == "onnx" and "INT8" not in tracker.name
