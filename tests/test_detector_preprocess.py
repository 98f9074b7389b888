"""The detector's input made in numpy (models/detector_onnx.py `_preprocess`) is the very one
ultralytics' torch preprocess makes, so detections and tracks stay the same."""

from __future__ import annotations

import functools

from tests.conftest import clip


def test_numpy_preprocess_gives_ultralytics_input_exactly(tmp_path):
    import decord
    import torch

    from backend.config import load
    from models import detector_onnx, pose

    settings = load()
    model, _, _ = detector_onnx.load(str(pose.default_weights()), "onnx", "cpu",
                                     settings.cache_dir)
    reader = decord.VideoReader(str(clip("intel_one-by-one-person-detection.mp4")))
    frame = reader[600].asnumpy()[..., ::-1].copy()  # BGR, as ultralytics takes it
    model.predict(frame, imgsz=640, verbose=False)  # builds the predictor
    predictor = model.predictor
    ours = functools.partial(detector_onnx._preprocess, predictor.preprocess,
                             predictor.pre_transform)
    for image in (frame, frame[:300, :500].copy()):
        want = predictor.preprocess([image])
        got = ours([image])
        assert got.dtype == want.dtype == torch.float32
        assert got.shape == want.shape and torch.equal(got, want)
