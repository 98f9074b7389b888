"""Frame captioners: one interface, `caption(frame_rgb) -> str`, two model-backed kinds.

No captioning model ships on PyPI, so the default is no captioner at all (backend/describe.py
writes descriptions from evidence). Users with an endpoint or a hub choose one of these.
"""

from __future__ import annotations

import base64
import io
from typing import Protocol

import numpy as np
from PIL import Image

_PROMPT = ("Describe this video frame in one or two factual sentences: the people and objects, "
           "what they are doing, and any visible text.")


class Captioner(Protocol):
    name: str

    def caption(self, frame_rgb: np.ndarray) -> str: ...


class OpenAIVisionCaptioner:
    """Any OpenAI-compatible chat endpoint that accepts image inputs (OpenAI, vLLM, Ollama)."""

    def __init__(self, base_url: str, api_key: str, model: str, timeout: float = 60.0):
        from openai import OpenAI

        if not model:
            raise ValueError("MEMORYREEL_CAPTION_MODEL must name the vision model to use.")
        self._client = OpenAI(base_url=base_url or None, api_key=api_key or "none",
                              timeout=timeout)
        self._model = model
        self.name = f"openai:{model}"

    def caption(self, frame_rgb: np.ndarray) -> str:
        buffer = io.BytesIO()
        Image.fromarray(frame_rgb).save(buffer, format="JPEG", quality=85)
        url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
        reply = self._client.chat.completions.create(
            model=self._model, max_tokens=120, temperature=0,
            messages=[{"role": "user", "content": [
                {"type": "text", "text": _PROMPT},
                {"type": "image_url", "image_url": {"url": url}},
            ]}])
        return (reply.choices[0].message.content or "").strip()


class TransformersCaptioner:
    """A transformers image-to-text model (e.g. Salesforce/blip-image-captioning-base)."""

    def __init__(self, model_id: str, device: str = "cpu"):
        from transformers import pipeline

        if not model_id:
            raise ValueError("MEMORYREEL_CAPTION_MODEL must name the image-to-text model to use.")
        self._pipe = pipeline("image-to-text", model=model_id, device=device)
        self.name = f"transformers:{model_id}"

    def caption(self, frame_rgb: np.ndarray) -> str:
        result = self._pipe(Image.fromarray(frame_rgb), max_new_tokens=40)
        return result[0]["generated_text"].strip()
