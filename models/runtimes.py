"""Which runtime runs an ONNX export fastest on this CPU: ONNX Runtime, with or without its
blocked (NCHWc) convolution layout, or OpenVINO reading the same file. Tried once per machine
and remembered beside the export; every way gives the same outputs in float32."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from models import openvino_session
from models.detector_onnx import session
from models.weights import WeightsError, file_lock

log = logging.getLogger(__name__)


def open_session(path: Path, threads: int, probe: tuple[int, ...] | None = None,
                 precision: str = "auto", record: Path | None = None):
    """A session on the export, with ONNX Runtime's `run`, `get_inputs` and `get_outputs`
    (`runtime_of` names what runs it); WeightsError where it cannot be read.

    With `probe` (an input shape), each way of running the export is built and run on zeros of
    that shape, and the fastest kept: ONNX Runtime with and without its blocked (NCHWc)
    convolution layout, and OpenVINO (in `precision`, see `openvino_session`). Which is fastest
    depends on the network and the CPU: the layout speeds up most networks, but slowed Places365's
    WideResNet18, whose first maps stay 112 x 112, to 1.05 s a frame against 0.27 s without it on
    a Xeon with AVX-512, where OpenVINO ran it in 0.11 s (0.014 s in bfloat16), and the I3D
    clip classifier in 0.75 s against 1.2 s. The choice is remembered for this CPU, the
    runtimes' versions, the threads and the input, in the file `record` (beside the export where
    not given), so only a process on a new machine pays for the probe."""
    record = record or path.with_name(f"{path.name}.runtimes.json")
    # OpenVINO keeps what it compiled for this CPU beside the record: a later process loads it in
    # a fraction of the time (0.3 against 1.5-1.7 s for the five networks on that Xeon).
    compiled = record.parent / "openvino-compiled"
    try:
        if probe is None:
            return _built(path, threads, _BLOCKED, precision)
        key = _choice_key(threads, probe, precision)
        remembered = _choices(record).get(key)
        if remembered in _WAYS:
            return _built(path, threads, remembered, precision, compiled)
        timed = [(_seconds_for(built, probe), way, built)
                 for way, built in ((w, _built(path, threads, w, precision, compiled))
                                    for w in _ways())]
        _, way, built = min(timed, key=lambda run: run[0])
        _remember(record, key, way)
        return built
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own unrelated types
        raise WeightsError(f"{path} is not a readable ONNX model ({exc}); delete it and run "
                           f"`python -m backend setup` to export it again") from exc


_BLOCKED, _UNBLOCKED, _OPENVINO = "onnxruntime", "onnxruntime without the blocked layout", "openvino"
_WAYS = (_BLOCKED, _UNBLOCKED, _OPENVINO)


def _ways() -> tuple[str, ...]:
    return _WAYS if openvino_session.available() else (_BLOCKED, _UNBLOCKED)


def _built(path: Path, threads: int, way: str, precision: str, compiled: Path | None = None):
    if way == _OPENVINO:
        return openvino_session.OpenVinoSession(path, threads, precision, compiled)
    return session(path, threads, blocked=way == _BLOCKED)


def runtime_of(built) -> str:
    """What runs a session `open_session` gave, for a model's name."""
    return getattr(built, "runtime", "ONNX Runtime")


def _choice_key(threads: int, probe: tuple[int, ...], precision: str) -> str:
    """What the fastest way depends on: the CPU (its name and instruction sets: a virtual
    machine may name only "Intel Xeon"), the runtimes' versions, the threads and the input."""
    import onnxruntime

    openvino = f", openvino {_openvino_version()} {precision}" if openvino_session.available() else ""
    return (f"{_cpu()}, onnxruntime {onnxruntime.__version__}{openvino}, {threads} threads, "
            f"input {'x'.join(map(str, probe))}")


@functools.cache
def _cpu() -> str:
    """This CPU's name and a digest of its instruction sets, read once a process."""
    cpu = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() in ("model name", "flags") and name.strip() not in cpu:
                cpu[name.strip()] = value.strip()
    except OSError:  # not Linux: the machine's architecture is all that is known
        cpu["model name"] = platform.machine()
    flags = hashlib.sha256(cpu.get("flags", "").encode()).hexdigest()[:12]
    return f"{cpu.get('model name', platform.machine())} (flags {flags})"


def _openvino_version() -> str:
    import openvino
    return openvino.__version__.split("-")[0]


def _choices(record: Path) -> dict:
    """The ways chosen before, by `_choice_key`; none where unreadable."""
    try:
        chosen = json.loads(record.read_text())
    except (OSError, ValueError):
        return {}
    return chosen if isinstance(chosen, dict) else {}


def _remember(target: Path, key: str, way: str) -> None:
    """Keep the choice for the next process, whole or not at all; a cache that cannot be written
    only means the next process probes again."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(target.with_name(f".{target.name}.lock")):
            chosen = _choices(target) | {key: way}
            fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            try:
                with os.fdopen(fd, "w") as out:
                    json.dump(chosen, out, indent=1, sort_keys=True)
                os.replace(partial, target)
            finally:
                Path(partial).unlink(missing_ok=True)
    except OSError as exc:
        log.info("the runtime chosen is not remembered in %s: %s", target, exc)


def _seconds_for(built, shape: tuple[int, ...]) -> float:
    """Seconds of a run of session `built` on zeros of `shape`, after a first run: OpenVINO's
    first run of a network takes two to five times the next ones."""
    feed = {built.get_inputs()[0].name: np.zeros(shape, np.float32)}
    built.run(None, feed)
    mark = time.perf_counter()
    built.run(None, feed)
    return time.perf_counter() - mark
