"""The detector's PyTorch weights exported once to ONNX and run by ONNX Runtime on the CPU.

ONNX Runtime runs the same YOLO network in a fraction of PyTorch's CPU time here, and ultralytics
loads the .onnx file into the very same predictor, letterbox, NMS and ByteTrack, so detections and
tracks stay those of the PyTorch model. The weights are exported here, with a dynamic input
size, so the predictor keeps PyTorch's rectangular letterbox at any `imgsz` (a fixed 640 x 640
export would letterbox every frame to a square). The export is cached under the
weights' sha256 and the ultralytics version (a new version may export differently).

INT8 (`precision="int8"`): the float export is quantised once by ONNX Runtime's static
quantisation, calibrated on frames of sample videos, and cached beside it. Only convolutions are
quantised (QDQ, per-channel int8 weights, uint8 activations; this CPU has AVX-512 VNNI): the
head's box decoding and the concat of boxes, scores and keypoints stay float, since one int8
scale over pixel coordinates and 0-1 scores would blur the scores (measured on the pose model:
scores off by up to 0.5 with the head quantised, 0.02 without). YOLO26n, the object detector,
lost 10 % of its detections in int8 (head quantised or not) for 8 % less time: it stays float.
OpenVINO was measured too: its
float run took 0.87 of ONNX Runtime's time, its run of the QDQ model was slower, so it is not used.

Threads: ONNX Runtime's workers spin between runs by default; interleaved with decoding, OCR and
other processes on a 2-core machine that burns CPU the rest of ingest needs (measured: 1.6x the
CPU seconds for the same frames), so spinning is turned off.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Literal, get_args

from models.weights import WeightsError, file_lock, sha256_file

log = logging.getLogger(__name__)

DetectorRuntime = Literal["auto", "onnx", "openvino", "torch"]
RUNTIMES = get_args(DetectorRuntime)
DetectorPrecision = Literal["fp32", "int8", "bf16"]
PRECISIONS = get_args(DetectorPrecision)
# Calibration: frames spread through each sample video, at the detector's usual input size.
_CALIBRATION_FRAMES = 8
_CALIBRATION_IMGSZ = 640
_VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv")
_FOLDER = "detector-onnx"
_NEEDS = {"onnx": "onnx==1.23.2", "onnxruntime": "onnxruntime"}  # export, then run


def exported(weights: Path, cache_dir: Path) -> Path:
    """Path of the ONNX export of the PyTorch `weights`, exporting it first if not cached."""
    missing = [pin for module, pin in _NEEDS.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise WeightsError(f"the ONNX detector runtime needs {', '.join(missing)}: pip install "
                           + " ".join(f"'{pin}'" for pin in missing)
                           + ", or set MEMORYREEL_DETECTOR_RUNTIME=torch")
    import ultralytics

    weights = Path(weights)
    folder = Path(cache_dir).expanduser() / _FOLDER
    key = f"{sha256_file(weights)[:16]}-ultralytics{ultralytics.__version__}"
    target = folder / f"{weights.stem}-{key}.onnx"
    if target.is_file():
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WeightsError(f"cannot create cache folder {folder}: {exc}") from exc
    with file_lock(folder / f".{target.name}.lock"):
        if not target.is_file():  # another process may have exported it while we waited
            _export(weights, target)
    return target


def _export(weights: Path, target: Path) -> None:
    from ultralytics import YOLO

    log.info("exporting %s to ONNX once (cached as %s)", weights.name, target)
    # Ultralytics writes the export beside the weights it loaded: give it a private copy.
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        copy = work / weights.name
        shutil.copyfile(weights, copy)
        try:
            # simplify=False: onnxslim is not installed and ONNX Runtime optimises the graph itself.
            out = YOLO(str(copy)).export(format="onnx", dynamic=True, simplify=False, device="cpu",
                                         verbose=False)
        except Exception as exc:  # noqa: BLE001 - any export failure leaves torch to the caller
            raise WeightsError(f"ONNX export of {weights.name} failed: {exc}") from exc
        os.replace(out, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def quantised(export: Path, videos: Path) -> Path:
    """Path of the INT8 model quantised from the float `export`, calibrated on frames of the
    videos in the folder `videos`, quantising it first if not cached (keyed by the export and
    the ONNX Runtime version, whose quantiser wrote it)."""
    import onnxruntime

    target = export.with_name(f"{export.stem}-int8-ort{onnxruntime.__version__}.onnx")
    if target.is_file():
        return target
    with file_lock(export.parent / f".{target.name}.lock"):
        if not target.is_file():
            _quantise(export, target, calibration_inputs(Path(videos)))
    return target


def calibration_inputs(videos: Path) -> list:
    """Detector inputs (1 x 3 x H x W, RGB in 0-1, letterboxed as ultralytics does) of frames
    spread through each video in `videos`; WeightsError when there are none."""
    import av
    import numpy as np

    paths = sorted(p for p in videos.iterdir() if p.suffix.lower() in _VIDEO_SUFFIXES) \
        if videos.is_dir() else []
    inputs = []
    for path in paths:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            step = max(1, (stream.frames or 300) // _CALIBRATION_FRAMES)
            for k, frame in enumerate(container.decode(stream)):
                if k % step == 0:
                    inputs.append(_letterboxed(frame.to_ndarray(format="rgb24"), np))
    if not inputs:
        raise WeightsError(f"no calibration frames for the INT8 detector: no videos in {videos}")
    return inputs


def _letterboxed(rgb, np):
    """As ultralytics' LetterBox(auto=True): the long side to the input size, the short side
    padded with grey (114) to a multiple of the stride, 32."""
    import cv2

    h, w = rgb.shape[:2]
    scale = _CALIBRATION_IMGSZ / max(h, w)
    nw, nh = round(w * scale), round(h * scale)
    padded_w, padded_h = -(-nw // 32) * 32, -(-nh // 32) * 32
    canvas = np.full((padded_h, padded_w, 3), 114, np.uint8)
    top, left = (padded_h - nh) // 2, (padded_w - nw) // 2
    canvas[top:top + nh, left:left + nw] = cv2.resize(rgb, (nw, nh),
                                                      interpolation=cv2.INTER_LINEAR)
    return (canvas.transpose(2, 0, 1)[None] / 255.0).astype(np.float32)


def _quantise(export: Path, target: Path, inputs: list) -> None:
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    class Frames(CalibrationDataReader):
        def __init__(self, name: str):
            self._feeds = iter({name: x} for x in inputs)

        def get_next(self):
            return next(self._feeds, None)

    model = onnx.load(str(export))
    name = model.graph.input[0].name
    # The distribution-to-box convolution of the head (DFL) feeds pixel coordinates: kept float.
    keep_float = [n.name for n in model.graph.node if "dfl" in n.name.lower()]
    log.info("quantising %s to INT8 once on %d frames (cached as %s)", export.name,
             len(inputs), target)
    part = target.with_suffix(f".{os.getpid()}.part")
    try:
        quantize_static(str(export), str(part), Frames(name), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"],
                        nodes_to_exclude=keep_float)
        quantised_model = onnx.load(str(part))
        # Ultralytics reads the task, stride and class names from the export's metadata.
        del quantised_model.metadata_props[:]
        quantised_model.metadata_props.extend(model.metadata_props)
        onnx.save(quantised_model, str(part))
        os.replace(part, target)
    except Exception as exc:  # noqa: BLE001 - a failed quantisation leaves the float model
        raise WeightsError(f"INT8 quantisation of {export.name} failed: {exc}") from exc
    finally:
        part.unlink(missing_ok=True)


def session(path: Path, threads: int, blocked: bool = True):
    """An ONNX Runtime CPU session on `threads` cores whose workers sleep between runs; with
    `blocked` False, without ONNX Runtime's blocked (NCHWc) convolution layout."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"],
                                        disabled_optimizers=[] if blocked else ["NchwcTransformer"])


_EXPORTED = (".onnx", ".engine", ".xml", ".tflite")  # exported weights carry no task: say it


def load(path: str, runtime: str, device: str, cache_dir, task: str | None = None,
         precision: str = "fp32", calibration: str | os.PathLike | None = None) -> tuple:
    """(ultralytics model, runtime name, class names). PyTorch weights run on ONNX Runtime for
    `auto` (on the CPU) and `onnx`, or on OpenVINO for `openvino`, exported once into
    `cache_dir`; `auto` falls back to PyTorch when that cannot be done. Weights in another
    format run in their own runtime. With `precision="int8"` the export is quantised once,
    calibrated on the videos in the folder `calibration`; where that cannot be done the float
    export runs, with a warning. `precision="bf16"` (OpenVINO only) is OpenVINO's choice for the
    CPU: bfloat16 where the CPU has it natively (Intel's AMX), float32 elsewhere."""
    from ultralytics import YOLO

    if runtime not in RUNTIMES:
        raise ValueError(f"detector runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    if precision not in PRECISIONS:
        raise ValueError(f"detector precision must be one of {', '.join(PRECISIONS)}, not "
                         f"{precision!r}")
    if precision == "bf16" and runtime != "openvino":
        raise ValueError("detector precision bf16 runs on OpenVINO only: set "
                         "MEMORYREEL_DETECTOR_RUNTIME=openvino")
    if not path.endswith(".pt"):
        model = YOLO(path, task=task or ("detect" if path.endswith(_EXPORTED) else None))
        return model, "onnx" if path.endswith(".onnx") else Path(path).suffix[1:], dict(model.names)
    model = YOLO(path, task=task)
    names = dict(model.names)  # read here: an exported model would load a session to tell them
    if runtime == "torch" or (runtime == "auto" and device != "cpu"):
        return model, "torch", names
    if cache_dir is None:  # nowhere to keep an export
        if runtime != "auto":
            raise ValueError(f"the {runtime} detector runtime needs a cache_dir for its export")
        return model, "torch", names
    try:
        onnx_path = exported(Path(model.ckpt_path or path), Path(cache_dir))
    except WeightsError as exc:
        if runtime != "auto":
            raise
        log.warning("detector runs on PyTorch: %s", exc)
        return model, "torch", names
    runs = "openvino" if runtime == "openvino" else "onnx"
    if precision == "int8":
        try:
            return YOLO(str(quantised(onnx_path, Path(calibration or ""))), task=model.task), \
                f"{runs} int8", names
        except WeightsError as exc:
            log.warning("detector runs in float: %s", exc)
    return YOLO(str(onnx_path), task=model.task), \
        f"{runs} bf16" if precision == "bf16" else runs, names


def runs_on(runtime: str) -> str:
    """What a detector's name says of the runtime `load` gave it."""
    return {"onnx": " (ONNX Runtime)", "onnx int8": " (ONNX Runtime INT8)",
            "openvino": " (OpenVINO)", "openvino int8": " (OpenVINO INT8)",
            "openvino bf16": " (OpenVINO bf16)"}.get(runtime, "")


def exported_runtime(runtime: str) -> bool:
    """Whether `load` gave a detector that runs our export (whose session `tune` swaps)."""
    return runtime.startswith(("onnx", "openvino"))


# Ultralytics reads an exported model's metadata with ast.literal_eval as its predictor is set
# up, and CPython 3.11's AST conversion keeps one recursion counter for every thread: two
# detectors set up at once (the frame pass's person and object trackers, on two threads) failed
# a CI run with "SystemError: AST constructor recursion depth mismatch".
_SETTING_UP = threading.Lock()


def first_call(model) -> contextlib.AbstractContextManager:
    """Hold around a call of an ultralytics `model`: its first call, which sets up the
    predictor, runs alone; later calls take no lock."""
    return _SETTING_UP if model.predictor is None else contextlib.nullcontext()


def tune(model, onnx_path: Path, threads: int, tuned: list, runtime: str = "onnx") -> None:
    """Ultralytics builds the ONNX Runtime session with default options, whose spinning workers
    burn the CPU the rest of ingest needs; swap in ours once the model's predictor exists
    (`tuned` remembers the backends already swapped), or OpenVINO's for an `openvino` runtime,
    and its input preparation for ours."""
    predictor = model.predictor
    backend = predictor.model.backend
    if backend not in tuned:
        if runtime.startswith("openvino"):
            from models.openvino_session import OpenVinoSession
            backend.session = OpenVinoSession(onnx_path, threads,
                                              "auto" if runtime.endswith("bf16") else "f32")
        else:
            backend.session = session(onnx_path, threads)
        predictor.preprocess = functools.partial(_preprocess, predictor.preprocess,
                                                 predictor.pre_transform)
        tuned.append(backend)


def _preprocess(original, pre_transform, images):
    """Ultralytics' preprocess (letterbox, BGR to RGB, channels first, 0-1 floats) in numpy:
    its torch reorder, flip and conversion took 21 ms of CPU a frame here against 35 ms for
    the network itself, the same float32 input made in a fraction of that."""
    import numpy as np
    import torch

    if isinstance(images, torch.Tensor):
        return original(images)
    batch = np.stack(pre_transform(images))[..., ::-1].transpose(0, 3, 1, 2)
    floats = np.ascontiguousarray(batch, dtype=np.float32)
    np.divide(floats, 255, out=floats)  # as torch's div_(255): the very same floats
    return torch.from_numpy(floats)
