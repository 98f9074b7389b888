"""Named chats for the command line: their turns are the short-term memory of the next question.

The web app keeps turns per browser session instead; this file store is for `ask --session`.
"""

from __future__ import annotations

import json
import re

from backend.config import Settings
from backend.errors import InputError


def _path(settings: Settings, name: str):
    if not re.fullmatch(r"[\w.-]{1,64}", name):
        raise InputError(f"Session name '{name}' must be 1-64 letters, digits, '.', '-' or '_'.")
    return settings.memory_path / "sessions" / f"{name}.json"


def load(settings: Settings, name: str) -> list[tuple[str, str]]:
    path = _path(settings, name)
    return [tuple(t) for t in json.loads(path.read_text())] if path.is_file() else []


def append(settings: Settings, name: str, question: str, answer: str) -> None:
    path = _path(settings, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    turns = load(settings, name) + [(question, answer)]
    path.write_text(json.dumps(turns[-50:], indent=1))
