"""The ImageNet frame tagger on real COCO images and video frames, and its cached ONNX export."""

from __future__ import annotations

import dataclasses
import json
import re

import av
import numpy as np
import pytest
from PIL import Image

from backend.evaluation.tags_bench import agrees
from backend.factory import ModelSet
from models import tagger
from models.lexicon import phrase_link
from models.tagger import ImageTagger, Tag
from models.weights import WeightsError
from tests.conftest import SHARED, clip, settings_for

COCO = SHARED / "images" / "objects-truth" / "coco_val2017_first128"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def lite0(cache):
    return ImageTagger(cache, "lite0")


def _image(name: str) -> np.ndarray:
    return np.asarray(Image.open(COCO / "images" / name).convert("RGB"))


def _frame(video: str, index: int) -> np.ndarray:
    with av.open(str(clip(video))) as container:
        for i, frame in enumerate(container.decode(video=0)):
            if i == index:
                return frame.to_ndarray(format="rgb24")
    pytest.fail(f"{video} has fewer than {index + 1} frames")


def _supported(tags: list[Tag], captions: list[str]) -> list[str]:
    """The tags the lexicon says a caption's word names (the same thing or a kind of it)."""
    return [t.label for t in tags if any(phrase_link(c, t.label) >= 0.8 for c in captions)]


# A bear, skis, teddy bears, a refrigerator and a tennis racket, all in ImageNet's classes.
@pytest.mark.parametrize("name", ["000000000285.jpg", "000000000785.jpg", "000000000776.jpg",
                                  "000000000802.jpg", "000000000885.jpg"])
def test_top_five_tags_name_what_the_captions_say(lite0, name):
    captions = json.loads((COCO / "captions.json").read_text(encoding="utf-8"))[name]
    [tags] = lite0.tags([_image(name)])
    assert len(tags) == 5
    assert _supported(tags, captions), (tags, captions)


def test_tags_come_best_first_as_probabilities_with_their_wordnet_ids(lite0):
    frames = [_image("000000000285.jpg"), _frame("intel_bottle-detection.mp4", 10)]
    bear, bottle = lite0.tags(frames, top=3)
    assert bear[0].label == "brown bear" and bear[0].wnid == "n02132136" and bear[0].score > 0.5
    assert "bottle" in " ".join(t.label for t in bottle)  # a 640 x 360 frame: any size is taken
    for tags in (bear, bottle):
        assert [t.score for t in tags] == sorted((t.score for t in tags), reverse=True)
        assert all(0 < t.score <= 1 and re.fullmatch(r"n\d{8}", t.wnid) for t in tags)
    assert lite0.tags([]) == []


def test_the_export_is_made_once_and_reused(cache, lite0, monkeypatch):
    def export_again(*args):
        raise AssertionError("exported again")

    monkeypatch.setattr(tagger, "_export", export_again)
    again = ImageTagger(cache, "lite0")
    assert again.path == lite0.path and again.path.is_file()
    assert again.tags([_image("000000000285.jpg")], top=1)[0][0].label == "brown bear"


def test_a_corrupt_cached_export_is_named(tmp_path):
    path = tagger.cached(tagger.VARIANTS["lite0"], tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an onnx model")
    with pytest.raises(WeightsError, match=re.escape(str(path))):
        ImageTagger(tmp_path, "lite0")


def test_weights_with_the_wrong_sha256_are_named_and_not_exported(tmp_path, monkeypatch):
    lite0 = tagger.VARIANTS["lite0"]
    monkeypatch.setitem(tagger.VARIANTS, "lite0", dataclasses.replace(lite0, sha256="0" * 64))
    with pytest.raises(WeightsError, match=r"efficientnet-lite0-57934424\.pth has sha256 5793"):
        ImageTagger(tmp_path, "lite0")
    assert not any(p.suffix == ".onnx" for p in tmp_path.rglob("*"))


def test_an_unknown_variant_is_refused(tmp_path):
    with pytest.raises(ValueError, match="lite0, lite2"):
        ImageTagger(tmp_path, "lite9")


def test_the_model_set_has_no_tagger_when_tags_are_off(tmp_path):
    assert ModelSet(settings_for(tmp_path, tags_enabled=False)).tagger is None


def test_the_bench_agrees_through_the_tags_own_synset():
    captions = ["A large bear that is sitting on grass.", "A person standing near a wall."]
    assert agrees(["n02132136"], captions)      # brown bear: a kind of bear
    assert not agrees(["n03976657"], captions)  # pole, the rod: not a person
