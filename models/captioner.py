"""Frame captioners: one interface, `caption(frame_rgb) -> str`, three model-backed kinds.

No captioning model ships on PyPI, so the default is no captioner at all (backend/ingest/describe.py
writes descriptions from evidence). Users with an endpoint, a multimodal GGUF or a hub choose
one of these. A vision endpoint and a local llama.cpp multimodal model are the same code:
`ChatCaptioner` over an OpenAI-compatible chat client (`models.llm.OpenAIChat`), so both report
failures as the same `LLMError`s with messages a user can read.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Protocol

import numpy as np
from PIL import Image

from models.llm import ChatModel, OpenAIChat

_PROMPT = ("Describe this video frame in one or two factual sentences: the people and objects, "
           "what they are doing, and any visible text.")
_MAX_TOKENS = 120
# Transient faults (a dropped connection, a 5xx, a 429) are retried with the OpenAI client's
# back-off: one failed request should not cost a long ingest.
_RETRIES = 2
# Enough for a frame's image tokens (SmolVLM and Moondream use about 64-1,000) and the prompt.
_VISION_CTX = 4096


class Captioner(Protocol):
    name: str

    def caption(self, frame_rgb: np.ndarray) -> str: ...


def image_message(frame_rgb: np.ndarray) -> dict:
    """One user message with the frame as a JPEG data URL, as OpenAI-compatible servers take it."""
    buffer = io.BytesIO()
    Image.fromarray(frame_rgb).save(buffer, format="JPEG", quality=85)
    url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
    return {"role": "user", "content": [{"type": "text", "text": _PROMPT},
                                        {"type": "image_url", "image_url": {"url": url}}]}


class ChatCaptioner:
    """Captions from any chat model that accepts image inputs; raises LLMError on a failure."""

    def __init__(self, chat: ChatModel, name: str):
        self._chat = chat
        self.name = name

    def caption(self, frame_rgb: np.ndarray) -> str:
        reply = self._chat.complete([image_message(frame_rgb)], max_tokens=_MAX_TOKENS)
        return " ".join(reply.text.split())


def openai_captioner(base_url: str, api_key: str, model: str, timeout: float) -> ChatCaptioner:
    """Any OpenAI-compatible endpoint that accepts images (OpenAI, vLLM, Ollama, llama.cpp)."""
    chat = OpenAIChat(base_url, model, api_key=api_key, timeout=timeout,
                      max_retries=_RETRIES)
    return ChatCaptioner(chat, f"openai:{model}")


def llama_captioner(model_path: Path, mmproj_path: Path, threads: int,
                    timeout: float) -> ChatCaptioner:
    """A multimodal GGUF and its projector in the embedded llama.cpp server (started once)."""
    from models.llama_server import get_embedded

    server = get_embedded(Path(model_path), n_ctx=_VISION_CTX, threads=threads,
                          mmproj_path=Path(mmproj_path))
    return ChatCaptioner(server.client(timeout=timeout), f"llama.cpp:{server.name}")


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
