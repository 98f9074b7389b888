"""The person detector on OpenVINO (MEMORYREEL_DETECTOR_RUNTIME=openvino) on real footage: in
float32 it finds exactly the people ONNX Runtime finds; in OpenVINO's choice for the CPU
(bfloat16 on one with AMX) the same people, their boxes within a pixel or two."""

from __future__ import annotations

import numpy as np
import pytest

from backend.config import load
from models import detector_onnx
from models.tracker import Tracker
from tests.conftest import clip


@pytest.fixture(scope="module")
def frames():
    import decord

    reader = decord.VideoReader(str(clip("mot15_TUD-Stadtmitte.mp4")))
    return [reader[k].asnumpy() for k in range(0, 120, 8)]


def _tracked(frames, runtime: str, precision: str) -> tuple[str, list[dict[int, tuple]]]:
    tracker = Tracker(runtime=runtime, precision=precision, cache_dir=load().cache_dir, threads=1)
    seen = [{d.track_id: d.box for d in tracker.track(frame) if not d.first_sighting}
            for frame in frames]
    return tracker.name, seen


@pytest.fixture(scope="module")
def onnx_runtime(frames):
    return _tracked(frames, "onnx", "fp32")


def _iou(a, b) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return w * h / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h)


def test_openvino_in_float32_tracks_the_people_onnx_runtime_tracks(frames, onnx_runtime):
    name, seen = _tracked(frames, "openvino", "fp32")
    assert "(OpenVINO)" in name and "(ONNX Runtime)" in onnx_runtime[0]
    assert sum(map(len, onnx_runtime[1])) >= 3 * len(frames)  # a busy street: people to track
    for ours, theirs in zip(seen, onnx_runtime[1]):
        assert ours.keys() == theirs.keys()
        assert all(np.allclose(ours[k], theirs[k], atol=0.5) for k in ours)


def test_openvino_in_its_own_precision_finds_the_same_people(frames, onnx_runtime):
    name, seen = _tracked(frames, "openvino", "bf16")
    assert "(OpenVINO bf16)" in name
    for ours, theirs in zip(seen, onnx_runtime[1]):
        assert abs(len(ours) - len(theirs)) <= 1
        matched = [max((_iou(box, other) for other in theirs.values()), default=0.0)
                   for box in ours.values()]
        assert sum(iou > 0.9 for iou in matched) >= len(theirs) - 1


def test_bfloat16_detectors_need_openvino():
    from models import pose

    with pytest.raises(ValueError, match="MEMORYREEL_DETECTOR_RUNTIME=openvino"):
        detector_onnx.load(str(pose.default_weights()), "onnx", "cpu", load().cache_dir,
                           precision="bf16")
