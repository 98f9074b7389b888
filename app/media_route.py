"""Gradio's file route may serve, from the library, only the media the app shows.

Gradio serves any file under `allowed_paths` at `/gradio_api/file=<absolute path>`, and its
allowed and blocked paths are fixed folders and files, while videos come and go. This ASGI
middleware sits in front of that route: under MEMORYREEL_HOME it lets through thumbnails, key
frame images and the videos the player plays, and answers 404 for everything else there
(`video.db`, `memory.lance`, replay counts, chat sessions, staging folders).
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import unquote

from backend.library import VIDEO_EXTENSIONS

log = logging.getLogger(__name__)

MEDIA_EXTENSIONS = frozenset(VIDEO_EXTENSIONS | {".jpg", ".jpeg", ".png", ".webp", ".gif"})
_FILE_ROUTE = "/file="


class MediaOnlyUnderHome:
    """ASGI middleware: a file-route request for a non-media file under `home` gets a 404."""

    def __init__(self, app, home: str | Path):
        self.app = app
        self.home = Path(home).resolve()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self.refused(scope.get("path", "")):
            await _not_found(send)
            return
        await self.app(scope, receive, send)

    def refused(self, url_path: str) -> bool:
        if _FILE_ROUTE not in url_path:
            return False
        target = unquote(url_path.split(_FILE_ROUTE, 1)[1])
        if "://" in target:  # a remote URL: not a file of ours
            return False
        try:
            resolved = Path(target).resolve()
        except (OSError, RuntimeError, ValueError):
            return True
        if not resolved.is_relative_to(self.home):
            return False
        if resolved.suffix.lower() in MEDIA_EXTENSIONS:
            return False
        log.warning("refused a file-route request for %s", resolved)
        return True


async def _not_found(send) -> None:
    await send({"type": "http.response.start", "status": 404,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": b"Not found"})
