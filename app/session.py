"""Per-browser-session settings: the LLM endpoint, N solutions and memory, over the server's defaults."""

from __future__ import annotations

from dataclasses import replace

from backend.ask import check_llm
from backend.config import Settings
from backend.errors import InputError
from backend.inputs import check_solutions


def with_choices(settings: Settings, base_url: str, model: str, api_key: str,
                 n_solutions: float, memory: bool) -> Settings:
    base_url = (base_url or "").strip()
    if base_url and not base_url.startswith(("http://", "https://")):
        raise InputError(f"The LLM base URL must start with http:// or https:// (got '{base_url}').")
    # The key field starts empty so the server's key never reaches a browser; an empty field
    # keeps the current key, but only for the same endpoint, so it is never sent elsewhere.
    key = (api_key or "").strip() or (settings.llm_api_key if base_url == settings.llm_base_url else "")
    return replace(settings, llm_base_url=base_url, llm_model=(model or "").strip(),
                   llm_api_key=key, n_solutions=check_solutions(n_solutions),
                   memory=bool(memory))


def describe(settings: Settings) -> str:
    where = (f"`{settings.llm_model or 'default'}` at {settings.llm_base_url}"
             if settings.llm_base_url else f"the embedded Qwen2.5-Coder {settings.llm_size} (llama.cpp)")
    memory = "on" if settings.memory else "off"
    return (f"This session answers with {where}, {settings.n_solutions} candidate "
            f"answer{'s' if settings.n_solutions != 1 else ''} per question, memory {memory}.")


def check_connection(settings: Settings) -> str:
    """A one-word completion through these settings; any failure comes back as a sentence."""
    try:
        return "✓ " + check_llm(settings)
    except Exception as e:  # LLM faults are LLMError; anything else is reported the same way
        return f"✗ Cannot use this LLM: {e}"
