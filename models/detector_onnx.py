"""The detector's PyTorch weights exported once to ONNX and run by ONNX Runtime on the CPU.

ONNX Runtime runs the same YOLO network in a fraction of PyTorch's CPU time here, and ultralytics
loads the .onnx file into the very same predictor, letterbox, NMS and ByteTrack, so detections and
tracks stay those of the PyTorch model. The weights are exported here, with a dynamic input
size, so the predictor keeps PyTorch's rectangular letterbox at any `imgsz` (a fixed 640 x 640
export would letterbox every frame to a square). The export is cached under the
weights' sha256 and the ultralytics version (a new version may export differently).

Threads: ONNX Runtime's workers spin between runs by default; interleaved with decoding, OCR and
other processes on a 2-core machine that burns CPU the rest of ingest needs (measured: 1.6x the
CPU seconds for the same frames), so spinning is turned off.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal, get_args

from models.weights import WeightsError, file_lock, sha256_file

log = logging.getLogger(__name__)

DetectorRuntime = Literal["auto", "onnx", "torch"]
RUNTIMES = get_args(DetectorRuntime)
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


def session(path: Path, threads: int):
    """An ONNX Runtime CPU session on `threads` cores whose workers sleep between runs."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


_EXPORTED = (".onnx", ".engine", ".xml", ".tflite")  # exported weights carry no task: say it


def load(path: str, runtime: str, device: str, cache_dir, task: str | None = None) -> tuple:
    """(ultralytics model, runtime name, class names). PyTorch weights run on ONNX Runtime for
    `auto` (on the CPU) and `onnx`, exported once into `cache_dir`; `auto` falls back to PyTorch
    when that cannot be done. Weights in another format run in their own runtime."""
    from ultralytics import YOLO

    if runtime not in RUNTIMES:
        raise ValueError(f"detector runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    if not path.endswith(".pt"):
        model = YOLO(path, task=task or ("detect" if path.endswith(_EXPORTED) else None))
        return model, "onnx" if path.endswith(".onnx") else Path(path).suffix[1:], dict(model.names)
    model = YOLO(path, task=task)
    names = dict(model.names)  # read here: an exported model would load a session to tell them
    if runtime == "torch" or (runtime == "auto" and device != "cpu"):
        return model, "torch", names
    if cache_dir is None:  # nowhere to keep an export
        if runtime == "onnx":
            raise ValueError("the ONNX detector runtime needs a cache_dir for its export")
        return model, "torch", names
    try:
        onnx_path = exported(Path(model.ckpt_path or path), Path(cache_dir))
    except WeightsError as exc:
        if runtime == "onnx":
            raise
        log.warning("detector runs on PyTorch: %s", exc)
        return model, "torch", names
    return YOLO(str(onnx_path), task=model.task), "onnx", names


def tune(model, onnx_path: Path, threads: int, tuned: list) -> None:
    """Ultralytics builds the ONNX Runtime session with default options, whose spinning workers
    burn the CPU the rest of ingest needs; swap in ours once the model's predictor exists
    (`tuned` remembers the backends already swapped)."""
    backend = model.predictor.model.backend
    if backend not in tuned:
        backend.session = session(onnx_path, threads)
        tuned.append(backend)
