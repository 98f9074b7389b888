"""Every route that serves files serves, from the library, only the media the app shows.

Gradio serves files on several routes (`/gradio_api/file=<path>` and `/gradio_api/file/<path>`
for any path, a proxy, media streams, its own front end ...), and its allowed and blocked paths
are fixed folders and files, while videos come and go. This ASGI middleware matches each request
against the app's own routes, as the router will, and applies the rule `ROUTES` gives the route:

- a route that serves the file a client names serves it only when `servable` allows it: a
  library video's thumbnail, preview or source, or a file in Gradio's cache (what the app made
  for the page: key frames, figures; uploads); anything else under the library (`video.db`,
  `memory.lance`, replay counts, sessions, staging) and anywhere else answers 404;
- a route the app has no use for (the proxy to other Gradio apps, run-history assets, screen
  recordings) answers 404;
- the others serve only Gradio's own front end, or what the app's events made, or no file.

A route whose path takes a path, or looks like it serves files, and has no rule answers 404
too, so a Gradio upgrade that adds one stays closed until it is given a rule here
(tests/test_file_routes.py checks every route of the app).
"""

from __future__ import annotations

import enum
import functools
import logging
import os
import re
from pathlib import Path

from gradio.route_utils import API_PREFIX
from gradio.utils import get_cache_folder, get_upload_folder
from starlette.routing import Mount, compile_path

from backend.errors import NotFoundError
from backend.library import VIDEO_EXTENSIONS, Library, check_video_id

log = logging.getLogger(__name__)


class Rule(enum.Enum):
    CLIENT_PATH = "serves the file its path parameter names, when `servable`"
    REFUSED = "the app has no use for it: 404"
    OWN_FILES = "serves only Gradio's own front end or what the app's events made"
    NO_FILES = "takes uploads or stream data, serves no file"


_API = API_PREFIX
ROUTES: dict[str, Rule] = {
    f"{_API}/file={{path_or_url:path}}": Rule.CLIENT_PATH,
    f"{_API}/file/{{path:path}}": Rule.CLIENT_PATH,
    # Relays files of the Spaces an app loads with gr.load; this one loads none.
    f"{_API}/proxy={{url_path:path}}": Rule.REFUSED,
    # Run history lives in a Hugging Face bucket; the app keeps none.
    f"{_API}/run-history/records": Rule.REFUSED,
    f"{_API}/run-history/records/{{endpoint}}/{{record_id}}/assets/{{asset_id}}": Rule.REFUSED,
    # Screen recordings: the app records none, and each call leaves a temp file behind.
    f"{_API}/process_recording": Rule.REFUSED,
    f"{_API}/stream/{{session_hash}}/{{run}}/{{component_id}}/playlist.m3u8": Rule.OWN_FILES,
    f"{_API}/stream/{{session_hash}}/{{run}}/{{component_id}}/{{segment_id}}.{{ext}}":
        Rule.OWN_FILES,
    f"{_API}/stream/{{session_hash}}/{{run}}/{{component_id}}/playlist-file": Rule.OWN_FILES,
    f"{_API}/stream/{{event_id}}": Rule.NO_FILES,
    f"{_API}/stream/{{event_id}}/close": Rule.NO_FILES,
    f"{_API}/upload": Rule.NO_FILES,
    f"{_API}/upload_progress": Rule.NO_FILES,
    # Runs a component's server functions; none of the app's components has one that reads files.
    f"{_API}/component_server": Rule.NO_FILES,
    f"{_API}/component_server/": Rule.NO_FILES,
    f"{_API}/custom_component/{{id}}/{{environment}}/{{type}}/{{file_name}}": Rule.OWN_FILES,
    "/static/{path:path}": Rule.OWN_FILES,
    "/assets/{path:path}": Rule.OWN_FILES,
    "/svelte/{path:path}": Rule.OWN_FILES,
    "/favicon.ico": Rule.OWN_FILES,
    "/pwa_icon": Rule.OWN_FILES,
    "/pwa_icon/{size}": Rule.OWN_FILES,
}

# What a route's path looks like when it may serve files: a path parameter, `name=...`, a word.
_FILE_WORDS = re.compile(r"file|proxy|stream|upload|asset|static|svelte|media|download|record"
                         r"|component|icon|image|video|audio", re.IGNORECASE)

# The media in a video's folder (backend/library.py): what the page shows and plays.
_MEDIA_NAMES = frozenset({"thumb.jpg", "preview.mp4"} | {f"source{e}" for e in VIDEO_EXTENSIONS})


def may_serve_files(route_path: str) -> bool:
    """Whether a route with this path could serve a file, and so needs a rule in ROUTES."""
    return ":path}" in route_path or "=" in route_path or bool(_FILE_WORDS.search(route_path))


def route_paths(app) -> list[str]:
    """The path of every route `app` (a Starlette or FastAPI app) has, with the prefixes of the
    routers it includes; a mounted app counts as one route that takes any path."""
    paths = []
    for route in getattr(app, "routes", []):
        if hasattr(route, "effective_route_contexts"):  # a router FastAPI includes
            paths += [context.path for context in route.effective_route_contexts()]
        elif isinstance(route, Mount):
            paths.append(route.path.rstrip("/") + "/{path:path}")
        elif getattr(route, "path", None) is not None:
            paths.append(route.path)
    return paths


class MediaOnlyUnderHome:
    """ASGI middleware: a request the route rules refuse gets a 404 before it reaches Gradio."""

    def __init__(self, app, home: str | Path):
        self.app = app
        self.home = Path(home).resolve()
        self.videos = Library(self.home).videos_dir
        self.caches = [Path(get_upload_folder()).resolve(), get_cache_folder().resolve()]

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self.refused(scope):
            await _not_found(send)
            return
        await self.app(scope, receive, send)

    def refused(self, scope) -> bool:
        path = _route_path(scope)
        for template in route_paths(scope.get("app")):
            match = _compiled(template).fullmatch(path)
            if match is None:
                continue
            rule = ROUTES.get(template)
            if rule is None and may_serve_files(template):
                log.warning("refused %s: route %s has no rule in app/media_route.py", path,
                            template)
                return True
            if rule is Rule.REFUSED:
                return True
            if rule is Rule.CLIENT_PATH and not self.servable(_path_parameter(match)):
                log.warning("refused a file-route request for %s", path)
                return True
        return False

    def servable(self, target: str) -> bool:
        """Whether a route may serve the file at `target`, a path as a client gave it."""
        if "://" in target or target.startswith(("http:", "https:", "data:")):
            return False  # the app serves no remote files
        try:
            # Lexically first, as Gradio does (`..` before links), then with links followed.
            resolved = Path(os.path.abspath(target)).resolve()
        except (OSError, RuntimeError, ValueError):
            return False
        if resolved.is_relative_to(self.home):
            return self._library_media(resolved)
        return any(resolved.is_relative_to(cache) for cache in self.caches)

    def _library_media(self, path: Path) -> bool:
        if path.parent.parent != self.videos or path.name not in _MEDIA_NAMES:
            return False
        try:
            check_video_id(path.parent.name)
        except NotFoundError:
            return False
        return path.is_file()


def _route_path(scope) -> str:
    """The path the router matches: without the root path the app is mounted at."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root):len(root) + 1] in ("", "/"):
        return path[len(root):]
    return path


@functools.lru_cache(maxsize=512)
def _compiled(template: str) -> re.Pattern:
    return compile_path(template)[0]


def _path_parameter(match: re.Match) -> str:
    # A file route has one parameter: the path or URL the client asks for.
    values = [v for v in match.groupdict().values() if v is not None]
    return values[0] if len(values) == 1 else ""


async def _not_found(send) -> None:
    await send({"type": "http.response.start", "status": 404,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": b"Not found"})
