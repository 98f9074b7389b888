"""Failures reach the page as sentences a person can act on, never as a stack trace."""

from __future__ import annotations

import functools
import inspect
import logging

import gradio as gr

from backend.errors import MemoryReelError
from models.errors import ModelError

log = logging.getLogger(__name__)


def readable(error: Exception) -> gr.Error:
    if isinstance(error, gr.Error):
        return error
    if isinstance(error, (MemoryReelError, ModelError)):
        return gr.Error(str(error), title="Cannot do that")
    log.error("unexpected failure in the app", exc_info=error)
    return gr.Error(f"Something went wrong: {error}. The server log has the details.",
                    title="Unexpected error")


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
