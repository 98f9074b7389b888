"""OpenVINO's CPU runtime behind the ONNX Runtime session calls our models and RapidOCR make
(`get_inputs`, `get_outputs`, `run`), so that an ONNX export runs on whichever of the two is
faster here (`models/runtimes.py`)."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np

# What a network computes in: "auto" lets OpenVINO choose for the CPU (bfloat16 where the CPU
# has it natively, as Intel's AMX; float32 elsewhere), "f32" keeps float32 everywhere.
Precision = Literal["auto", "f32"]
PRECISIONS = get_args(Precision)

log = logging.getLogger(__name__)


def available() -> bool:
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def _writable(folder: Path) -> bool:
    """Whether OpenVINO may keep what it compiles in `folder` (it fails to load a network at all
    when it cannot write there): a read-only cache only means compiling again next time."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.info("OpenVINO's compiled networks are not kept in %s: %s", folder, exc)
        return False
    return os.access(folder, os.W_OK)


@dataclass(frozen=True)
class _Port:
    name: str


class OpenVinoSession:
    """An ONNX export compiled by OpenVINO for this CPU on `threads` cores; what it compiled kept
    in the folder `compiled`, where given, for the next process to load."""

    def __init__(self, path: Path, threads: int, precision: str = "auto",
                 compiled: Path | None = None):
        import openvino

        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                  # Pinned threads would hold their cores against the detectors' threads.
                  "ENABLE_CPU_PINNING": False}
        if precision == "f32":
            config["INFERENCE_PRECISION_HINT"] = "f32"
        if compiled is not None and _writable(compiled):
            config["CACHE_DIR"] = str(compiled)
        self._model = openvino.Core().compile_model(str(path), "CPU", config)
        self.precision = self._model.get_property("INFERENCE_PRECISION_HINT").to_string()
        self._inputs = [_Port(port.any_name) for port in self._model.inputs]
        self._outputs = [_Port(port.any_name) for port in self._model.outputs]
        self._request = self._model.create_infer_request()
        # One request holds one run's buffers; ONNX Runtime's sessions may be run from two
        # threads at once, so this one is too, a run at a time.
        self._lock = threading.Lock()

    @property
    def runtime(self) -> str:
        """How messages and the evidence name it: the runtime and what it computes in."""
        return f"OpenVINO {self.precision}"

    def get_inputs(self) -> list[_Port]:
        return self._inputs

    def get_outputs(self) -> list[_Port]:
        return self._outputs

    def run(self, output_names, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """The outputs named (all where None), for inputs fed by name."""
        wanted = [port.name for port in self._outputs] if output_names is None else output_names
        with self._lock:
            results = self._request.infer(feed)
            return [np.array(results[name]) for name in wanted]
