"""The Places365 place tagger on real COCO images: the place the captions name, and indoors or
outdoors from it, through the export `setup` made."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from backend import config
from backend.ingest import picture_facts
from models import classifier_onnx, places, runtimes
from models.weights import WeightsError
from tests.conftest import SHARED

COCO = SHARED / "images" / "objects-truth" / "coco_val2017_first128"


@pytest.fixture(scope="module")
def tagger():
    try:
        return places.PlaceTagger(config.load().cache_dir)
    except WeightsError as e:
        pytest.fail(f"run `python -m backend setup` first: {e}")


def _image(name: str) -> np.ndarray:
    return np.asarray(Image.open(COCO / "images" / name).convert("RGB"))


def _captions(name: str) -> str:
    return " ".join(json.loads((COCO / "captions.json").read_text(encoding="utf-8"))[name]).lower()


# A skier on a slope and a batter at the plate: places ImageNet's things do not name.
@pytest.mark.parametrize("name, word", [("000000000785.jpg", "ski"), ("000000000872.jpg", "baseball")])
def test_the_top_place_is_the_one_the_captions_name(tagger, name, word):
    [found] = tagger.tags([_image(name)])
    assert word in _captions(name)
    assert word in found[0].label and found[0].score > 0.5, found


def test_every_runtime_chosen_for_speed_names_the_same_places(tagger):
    """The tagger runs on whichever of ONNX Runtime (with or without its blocked layout) and
    OpenVINO is faster on this CPU: in float32 they must give the same places with the same
    scores, or the machine would change what a video holds; OpenVINO's own choice (bfloat16 on
    a CPU with AMX) the same best place, its probabilities within a few hundredths."""
    from models.openvino_session import OpenVinoSession

    names = ("000000000785.jpg", "000000000139.jpg", "000000000285.jpg", "000000000632.jpg")
    batch = np.stack([places.preprocess(_image(name)) for name in names])
    exact = [runtimes._built(tagger.path, 1, way, "f32").run(None, {"images": batch})[0]
             for way in runtimes._WAYS]
    for logits in exact[1:]:
        assert np.allclose(exact[0], logits, atol=1e-3)
    chosen = OpenVinoSession(tagger.path, 1, "auto").run(None, {"images": batch})[0]
    assert (chosen.argmax(axis=1) == exact[0].argmax(axis=1)).all()
    assert np.abs(classifier_onnx.softmax(chosen) - classifier_onnx.softmax(exact[0])).max() < 0.05


def test_the_runtime_chosen_is_remembered_so_a_later_process_does_not_probe(tagger, tmp_path,
                                                                          monkeypatch):
    """The probe costs a second or more at every start; its choice is kept beside the export for
    this CPU, a later load runs no probe and names the same places, and a spoilt record only
    means probing again."""
    export = tmp_path / tagger.path.name
    export.symlink_to(tagger.path)
    record = tmp_path / f"{export.name}.runtimes.json"
    record.write_text("not json")
    shape = (1, 3, 224, 224)
    first = runtimes.open_session(export, 1, probe=shape)
    chosen = json.loads(record.read_text())
    assert len(chosen) == 1 and next(iter(chosen.values())) in runtimes._WAYS, chosen
    if runtimes.runtime_of(first).startswith("OpenVINO"):  # and what it compiled, for next time
        assert any((tmp_path / "openvino-compiled").iterdir())
    monkeypatch.setattr(runtimes, "_seconds_for",
                        lambda *_: pytest.fail("probed although the choice was remembered"))
    again = runtimes.open_session(export, 1, probe=shape)
    batch = places.preprocess(_image("000000000139.jpg"))[None]
    assert np.allclose(first.run(None, {"images": batch})[0], again.run(None, {"images": batch})[0],
                       atol=1e-5)


def test_a_cache_openvino_cannot_write_to_only_means_compiling_again(tagger, tmp_path):
    from models.openvino_session import OpenVinoSession

    blocked = tmp_path / "a file where the folder would go"
    blocked.write_text("")
    built = OpenVinoSession(tagger.path, 1, "f32", blocked / "openvino-compiled")
    batch = places.preprocess(_image("000000000139.jpg"))[None]
    assert built.run(None, {"images": batch})[0].shape == (1, 365)


def test_every_place_has_a_wordnet_sense_and_a_side():
    classes = places.classes()
    assert len(classes) == 365
    assert all(wnid[0] == "n" and len(wnid) == 9 for wnid, _, _ in classes)
    assert {side for _, _, side in classes} == {"indoors", "outdoors"}


def test_a_room_the_tagger_names_makes_the_shot_indoors(tagger):
    """A television room (000000000139.jpg): no tracked kind settles it, the place does."""
    name = "000000000139.jpg"
    assert "room" in _captions(name)
    [found] = tagger.tags([_image(name)])
    assert picture_facts.place(found, set()) == "indoors"
    assert all(tag.place in ("indoors", "outdoors") for tag in found)


def test_ingest_never_downloads_the_weights(tmp_path):
    with pytest.raises(WeightsError, match="python -m backend setup"):
        places.exported(tmp_path)
