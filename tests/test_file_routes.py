"""Every route of the web app that serves files serves, from the library, only its media.

Gradio serves files at several addresses, and app/media_route.py gives each route a rule. These
tests list the routes of the app as launched, so that a route a Gradio upgrade adds and no rule
covers fails here, and ask a live server for the library's private files through every form of
every file route.
"""

from __future__ import annotations

import http.client
import os
import re
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from gradio.utils import get_upload_folder
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from app.media_route import ROUTES, MediaOnlyUnderHome, Rule, may_serve_files, route_paths
from tests.conftest import running_app, settings_for
from tests.fakes import fake_video_folder

VIDEO_ID, OTHER_ID = "0123456789abcdef", "fedcba9876543210"
# A route that may serve files: a path parameter, `name=...`, a parameter or a word that says so.
_FILE_ISH = re.compile(r":path\}|=|\{[^}]*(path|file|url|asset)[^}]*\}"
                       r"|file|proxy|stream|upload|asset|static|media|download", re.IGNORECASE)


def _fake_video(folder: Path, video_id: str) -> None:
    fake_video_folder(folder, video_id)
    (folder / "memory.lance").mkdir()
    (folder / "memory.lance" / "episodic.manifest").write_bytes(b"private")
    for media in ("thumb.jpg", "preview.mp4", "source.mp4"):
        (folder / media).write_bytes(f"{media} of {video_id}".encode())


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    for video_id in (VIDEO_ID, OTHER_ID):
        _fake_video(home / "videos" / video_id, video_id)
    for private in (home / "memory" / "replays.db", home / "sessions" / "demo.json",
                    home / ".staging" / f"{VIDEO_ID}-1a2b" / "thumb.jpg"):
        private.parent.mkdir(parents=True)
        private.write_bytes(b"private")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio-cache")))
        with running_app(settings_for(home)) as (url, demo):
            yield home, url, demo


def _get(url: str, path: str) -> tuple[int, bytes]:
    """GET `path` exactly as written: no client normalises `..`, `//` or %-escapes away."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def test_every_route_that_may_serve_files_has_a_rule(live):
    paths = route_paths(live[2].app)
    # The listing reaches into the routers Gradio includes, where its file routes live.
    assert "/gradio_api/file={path_or_url:path}" in paths and "/gradio_api/upload" in paths
    # The guard's own test of a route (it refuses such a route when it has no rule) misses
    # none that this file's looser reading flags.
    assert [p for p in paths if _FILE_ISH.search(p) and not may_serve_files(p)] == []
    unruled = [p for p in paths if may_serve_files(p) and p not in ROUTES]
    assert unruled == [], "routes that may serve files and have no rule in app/media_route.py"
    assert [p for p, rule in ROUTES.items() if rule is Rule.CLIENT_PATH] == [
        "/gradio_api/file={path_or_url:path}", "/gradio_api/file/{path:path}"]


def test_a_route_that_may_serve_files_and_has_no_rule_is_refused(tmp_path):
    async def anything(request):
        return PlainTextResponse("served")
    new_routes = [Route("/gradio_api/fetch={where:path}", anything),
                  Route("/gradio_api/download/{name}", anything),
                  Route("/gradio_api/queue/status", anything)]
    app = Starlette(routes=new_routes)
    app.add_middleware(MediaOnlyUnderHome, home=tmp_path)
    client = TestClient(app)
    assert client.get("/gradio_api/fetch=/etc/hostname").status_code == 404
    assert client.get("/gradio_api/download/video.db").status_code == 404
    assert client.get("/gradio_api/queue/status").status_code == 200  # no file, no rule needed


def _private_targets(home: Path) -> list[str]:
    folder, other = home / "videos" / VIDEO_ID, home / "videos" / OTHER_ID
    return [
        str(folder / "video.db"), str(other / "video.db"),
        str(folder / "memory.lance" / "episodic.manifest"),
        str(home / "memory" / "replays.db"), str(home / "sessions" / "demo.json"),
        str(home / ".staging" / f"{VIDEO_ID}-1a2b" / "thumb.jpg"),
        f"{folder}/../{OTHER_ID}/video.db",                 # traversal to the other video
        f"{other}/../{VIDEO_ID}/thumb.jpg/../video.db",
        f"{folder}/%2e%2e/{OTHER_ID}/video.db",             # %-encoded dots
        f"{folder}/%2E%2E/%2E%2E/videos/{OTHER_ID}/video%2Edb",
        f"/{folder}//video.db",                              # doubled slashes
        f"{folder}/./video.db",
        quote(str(folder / "video.db"), safe=""),          # every slash encoded
        os.path.relpath(folder / "video.db"),               # relative to the server's folder
        "/etc/hostname",                                    # neither library nor cache
    ]


@pytest.mark.parametrize("form", ["/gradio_api/file={}", "/gradio_api/file/{}",
                                  "/gradio_api/file={}?__sign=x"])
def test_no_file_route_serves_the_librarys_private_files(live, form):
    home, url, _ = live
    for target in _private_targets(home):
        status, body = _get(url, form.format(target))
        assert status == 404, (form.format(target), status, body[:80])
        assert b"private" not in body and b"SQLite" not in body


def test_the_proxy_serves_nothing(live):
    home, url, _ = live
    own = f"{url}gradio_api/file={home}/videos/{VIDEO_ID}/video.db"
    assert _get(url, f"/gradio_api/proxy={own}")[0] == 404
    assert _get(url, f"/gradio_api/file={own}")[0] == 404


def test_the_media_and_the_page_are_still_served(live):
    home, url, _ = live
    folder = home / "videos" / VIDEO_ID
    for media in ("thumb.jpg", "preview.mp4", "source.mp4"):
        for form in ("/gradio_api/file={}", "/gradio_api/file/{}"):
            assert _get(url, form.format(folder / media)) == (200, (folder / media).read_bytes())
    key_frame = Path(get_upload_folder()) / "9c" / "frame.png"
    key_frame.parent.mkdir(parents=True, exist_ok=True)
    key_frame.write_bytes(b"a key frame the app made")
    assert _get(url, f"/gradio_api/file={key_frame}") == (200, key_frame.read_bytes())
    assert _get(url, "/")[0] == 200 and _get(url, "/gradio_api/info")[0] == 200
    assert _get(url, "/config")[0] == 200
