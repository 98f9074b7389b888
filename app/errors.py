"""Failures reach the page as sentences a person can act on, never as a stack trace."""

from __future__ import annotations

import functools
import inspect
import logging
import re
from pathlib import Path, PurePosixPath

import gradio as gr

from backend.errors import MemoryReelError
from models.errors import ModelError

log = logging.getLogger(__name__)


# An absolute path in a message: quoted (spaces and all), or bare, but not the path of a URL.
_QUOTED_PATH = re.compile(r"""(['"])(/[^'"\n]+)\1""")
_BARE_PATH = re.compile(r"(?<![\w:/.~-])/[^\s'\"`,;()\[\]<>]+")


def readable(error: Exception) -> gr.Error:
    """The message a client sees, naming files by their base name only: the server's folders
    (Gradio's cache, HOME, the temp dir) are none of a client's business."""
    if isinstance(error, gr.Error):
        error.message = without_server_paths(str(error.message))
        return error
    if isinstance(error, (MemoryReelError, ModelError)):
        return gr.Error(without_server_paths(str(error)), title="Cannot do that")
    log.error("unexpected failure in the app", exc_info=error)
    return gr.Error(f"Something went wrong: {without_server_paths(str(error))}. The server log "
                    "has the details.", title="Unexpected error")


def without_server_paths(text: str) -> str:
    """`text` with each path on this machine replaced by its last part (`'/tmp/gradio/ab12/
    clip.mp4' does not exist` -> `'clip.mp4' does not exist`)."""
    text = _QUOTED_PATH.sub(lambda m: m[1] + _base_name(m[2]) + m[1], text)
    return _BARE_PATH.sub(lambda m: _base_name(m[0]), text)


def _base_name(path: str) -> str:
    parts = PurePosixPath(path).parts
    # Only what starts in a folder this machine has: `/v1/chat` in a message is no server path.
    if len(parts) < 3 or not Path("/", parts[1]).is_dir():
        return path
    return parts[-1]


def friendly(fn):
    """Wrap an event handler (plain or generator) so every exception becomes a gr.Error."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def stream(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except Exception as e:
                raise readable(e) from e
        return stream

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise readable(e) from e
    return call
