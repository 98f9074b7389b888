"""Shared fixtures: the real clips in ../shared/videos and one library ingested once per run."""

from __future__ import annotations

import os
import random
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from backend import config
from tests.fakes import base_url, send, serving

# The app reads its prompts' openings into the model at every start (backend/warm_up.py): tens of
# seconds of both cores beside each test's own work. Off here; tests/test_warm_up.py turns it on.
os.environ.setdefault("MEMORYREEL_LLM_WARM_UP", "0")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MEMORYREEL_SHARED", REPO.parent / "shared"))
VIDEOS = SHARED / "videos"


def clip(name: str) -> Path:
    path = VIDEOS / name
    if not path.is_file():
        pytest.fail(f"test clip missing: {path} (set MEMORYREEL_SHARED to the shared folder)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_endpoint() -> str:
    """An OpenAI base URL where nothing listens: the LLM is down."""
    return f"http://127.0.0.1:{free_port()}/v1"


def settings_for(home: Path, **overrides) -> config.Settings:
    """Settings from the environment with the library moved to `home`."""
    from dataclasses import replace
    return replace(config.load(), home=home, **overrides)


def copy_video(entry, home: Path):
    """The video's files (its tables, source, preview and thumbnail; not its memories) in a
    library of their own at `home`, for a test to change without touching the shared library:
    its VideoEntry there."""
    import shutil

    from backend.library import Library

    folder = home / "videos" / entry.folder.name
    folder.mkdir(parents=True)
    for path in entry.folder.iterdir():
        if path.is_file():
            shutil.copyfile(path, folder / path.name)
    return Library(home).get(entry.video_id)


def leftovers(settings: config.Settings) -> list[str]:
    """What HOME holds besides the library and memory: staging copies, lock files."""
    home = settings.home
    return sorted(str(p.relative_to(home)) for folder in (".staging", ".locks")
                  if (home / folder).is_dir() for p in (home / folder).iterdir())


@contextmanager
def running_app(settings: config.Settings) -> Iterator[tuple[str, object]]:
    """The app on a free local port until the block ends: (its URL, the Gradio Blocks)."""
    from app.ui import launch

    port = free_port()
    demo = launch(settings, port=port, prevent_thread_lock=True)
    try:
        yield f"http://127.0.0.1:{port}/", demo
    finally:
        demo.close()


CHROMIUM = "/usr/bin/chromium"


@contextmanager
def browser_page(url: str):
    """A page of Debian's Chromium, headless, open at `url`, until the block ends."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (make test does this)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(url)
            yield page
        finally:
            browser.close()


def upload(url: str, path: Path) -> str:
    """Upload `path` the way gradio_client and the page do; the server's path for it."""
    import httpx

    with open(path, "rb") as f:
        answer = httpx.post(f"{url}gradio_api/upload", files=[("files", (path.name, f))])
    answer.raise_for_status()
    return answer.json()[0]


def call_endpoint(url: str, name: str, *data) -> tuple[str, object]:
    """Call a named endpoint over Gradio's HTTP API with `data` as given (a FileData dict names
    a server path, which gradio_client would upload instead): ("complete", outputs) or
    ("error", {"error": message, ...})."""
    import json

    import httpx

    posted = httpx.post(f"{url}gradio_api/call/{name}", json={"data": list(data)})
    posted.raise_for_status()
    event = None
    with httpx.stream("GET", f"{url}gradio_api/call/{name}/{posted.json()['event_id']}",
                      timeout=600) as stream:
        for line in stream.iter_lines():
            if line.startswith("event:"):
                event = line.removeprefix("event:").strip()
            elif line.startswith("data:") and event in ("complete", "error"):
                return event, json.loads(line.removeprefix("data:"))
    raise AssertionError(f"{name} sent no result (last event {event})")


def file_data(path: str | Path) -> dict:
    return {"path": str(path), "meta": {"_type": "gradio.FileData"}}


@pytest.fixture(scope="session")
def library_settings(tmp_path_factory) -> config.Settings:
    return settings_for(tmp_path_factory.mktemp("library"))


@pytest.fixture(scope="session")
def ingested(library_settings):
    """ingested(name) -> IngestResult; each clip is ingested once per test run."""
    from backend.ingest.pipeline import ingest

    done = {}

    def get(name: str):
        if name not in done:
            done[name] = ingest(clip(name), library_settings)
        return done[name]
    return get


class _Garbage(BaseHTTPRequestHandler):
    """Answers every POST with an HTML page: a proxy or a wrong URL, not an OpenAI endpoint."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        send(self, 200, "text/html", b"<html>502 Bad Gateway... or not</html>")

    def log_message(self, *args):
        pass


@pytest.fixture
def garbage_endpoint():
    """The base URL of a local server that answers chat requests with garbage."""
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)) as server:
        yield base_url(server)


def schema_value(schema: dict, defs: dict, rng: random.Random, texts: list[str]):
    """A random value that fits a JSON schema, as a grammar-constrained model would write it:
    the fake LLMs' replies. Strings are drawn from `texts`, cut to the schema's maxLength."""
    if "$ref" in schema:
        return schema_value(defs[schema["$ref"].split("/")[-1]], defs, rng, texts)
    if "anyOf" in schema:
        return schema_value(rng.choice(schema["anyOf"]), defs, rng, texts)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {name: schema_value(sub, defs, rng, texts)
                for name, sub in schema.get("properties", {}).items()}
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", -5), schema.get("maximum", 50)
        return rng.uniform(low, high) if kind == "number" else rng.randint(int(low), int(high))
    text = rng.choice(texts)
    return text[: schema.get("maxLength", len(text))]
