"""Uploads in Gradio's cache: which files clients uploaded, and when one may be removed.

Gradio keeps an upload at `<cache>/<sha256 of its bytes>/<name>`, so two uploads of the same
file are one file on the server, and the same cache holds what the app put there for the page
(key frames, figures). So an ingest removes the file it was given only when a client uploaded it
and no other upload of it still waits for its ingest; a path a client merely names (a cached key
frame, a file it did not upload) is never removed, whatever the request says. `RecordUploads`
counts the files Gradio's upload route hands out before the client sees their paths; what is
never ingested goes with Gradio's hourly sweep of the cache.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import Counter
from pathlib import Path

import gradio as gr
from gradio.route_utils import API_PREFIX
from gradio.utils import NamedString, get_upload_folder
from gradio_client import utils as client_utils

log = logging.getLogger(__name__)

UPLOAD_ROUTE = f"{API_PREFIX}/upload"


class Uploads:
    """How many uploads of each cached file await their ingest (thread-safe)."""

    def __init__(self):
        self._guard = threading.Lock()
        self._waiting: Counter[str] = Counter()
        self._arriving = 0  # upload requests still being received

    def arriving(self, change: int) -> None:
        with self._guard:
            self._arriving += change

    def received(self, paths: list[str]) -> None:
        with self._guard:
            self._waiting.update(os.path.realpath(p) for p in paths)

    def done_with(self, path: str | Path) -> None:
        """One upload of `path` has been ingested or refused: the file goes when it was the last
        one waiting. A file no client uploaded stays."""
        key = os.path.realpath(path)
        with self._guard:
            if self._waiting[key] <= 0:
                self._waiting.pop(key, None)
                return
            self._waiting[key] -= 1
            if self._waiting[key]:
                return
            del self._waiting[key]
            # An upload in progress may be this file again, renamed into place before its path
            # is recorded: removing it now would pull it from under that upload's ingest.
            if not self._arriving:
                _remove(Path(key))


UPLOADS = Uploads()


def _remove(path: Path) -> None:
    cache = Path(get_upload_folder()).resolve()
    if not path.is_relative_to(cache):
        return
    try:
        path.unlink(missing_ok=True)
        if path.parent != cache and not any(path.parent.iterdir()):
            path.parent.rmdir()  # Gradio keeps each upload in a folder of its own
    except OSError as e:
        log.warning("could not remove the uploaded copy %s: %s", path.name, e)


class RecordUploads:
    """ASGI middleware: the paths Gradio's upload route answers with are recorded in `uploads`
    before the answer leaves, so no ingest can start on one that is not yet counted."""

    def __init__(self, app, uploads: Uploads = UPLOADS):
        self.app = app
        self.uploads = uploads

    async def __call__(self, scope, receive, send):
        if not (scope["type"] == "http" and scope.get("method") == "POST"
                and scope.get("path", "").rstrip("/").endswith(UPLOAD_ROUTE)):
            await self.app(scope, receive, send)
            return
        held: list[dict] = []

        async def send_recorded(message):
            held.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                if held[0].get("status") == 200:
                    self.uploads.received(_paths(held))
                for out in held:
                    await send(out)

        self.uploads.arriving(+1)
        try:
            await self.app(scope, receive, send_recorded)
        finally:
            self.uploads.arriving(-1)


def _paths(messages: list[dict]) -> list[str]:
    try:
        paths = json.loads(b"".join(m.get("body", b"") for m in messages[1:]))
    except ValueError:
        return []
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


def path_only(upload: gr.File) -> gr.File:
    """`upload` (a gr.File of type "filepath"), handing its handler the uploaded file's path and
    leaving nothing behind.

    Gradio's own (6.x) also opens an empty temporary file in its cache for every file it passes
    on, and neither closes nor removes it: one 0-byte file per upload. The method is replaced on
    the instance, as a subclass of a Gradio component writes a `.pyi` stub beside its module.
    """
    def process_single_file(f):
        if upload.file_types and not client_utils.is_valid_file(f.path, upload.file_types):
            raise gr.Error("Invalid file type. Please upload a file that is one of these "
                           f"formats: {upload.file_types}")
        return NamedString(f.path)

    if upload.type != "filepath":
        raise ValueError("path_only is for uploads handed on as paths (type='filepath')")
    upload._process_single_file = process_single_file
    return upload
