"""Faults from outside the program (issue 12): kill -9 during every ingest stage and during an
answer, the LLM server killed mid-answer, a full disk during ingest, and eight questions at once
through the web app. After each, the library, its earlier video, memories and replay counts are
as they were, nothing is left behind (staging copies, locks, LLM servers), and the next ingest or
question works.

Every killed or filled run is the real command line in a child process; tests/stage_hook.py
stops or fills the disk at a named ingest stage, and `ask` prints its planner steps, so each
fault lands at a known point without a timing guess. Tracking samples 1 frame a second: what is
tested is what survives a fault, not tracking detail.
"""

from __future__ import annotations

import json
import os
import queue
import random
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psutil
import pytest
import sqlite_utils

from backend.ask import ask
from backend.config import Settings
from backend.errors import DiskFullError
from backend.ingest.pipeline import STAGES, ingest
from backend.library import Library
from backend.memory.replay import MemoryOptions
from backend.memory.store import MemoryStore
from models import weights
from models.llama_server import get_embedded
from tests.conftest import REPO, clip, leftovers, running_app, schema_value, settings_for
from tests.fakes import chat_completion, send_json, serving

CLIP = "mot15_TUD-Campus.mp4"          # the ingest that is killed: 2.8 s
EARLIER = "mot15_TUD-Stadtmitte.mp4"   # in the library before every fault; it must survive
FAST = {"track_fps": 1.0}
REACH_S = 300   # for a child to reach its stage on a busy two-core machine
GONE_S = 30     # for a killed process's children to exit
FACT_QUESTION = "how many people walk through the street?"
FACT = "Several people walk through the street."
OPTIONS = ["2", "3", "4", "5", "6"]


# --- the library before a fault, and what must be the same after it ---------------------------

@dataclass
class Library0:
    settings: Settings
    earlier: str                  # video id of EARLIER
    clip_counts: dict[str, int]   # CLIP's counts from an ingest that was never interrupted
    state: dict                   # snapshot() of this library


def snapshot(settings: Settings) -> dict:
    """Videos with their row and segment counts, memories and replay counts, as stored."""
    store = MemoryStore(settings)
    return {"videos": {e.video_id: e.counts() for e in Library(settings.home).list()},
            "memories": {m.id: m.text for m in store.list()},
            "replays": {r.id: r.replays for r in store.replay_counts()}}


@pytest.fixture(scope="module")
def library0(tmp_path_factory) -> Library0:
    """EARLIER ingested, a fact and a workflow learned about it, replayed; CLIP's counts."""
    settings = settings_for(tmp_path_factory.mktemp("library0"), **FAST)
    earlier = ingest(clip(EARLIER), settings).video_id
    store = MemoryStore(settings)
    fact = store.add("semantic", {"video_id": earlier, "question": FACT_QUESTION,
                                  "text": FACT,
                                  "answer": "several", "times": [1.0], "verdict": "checked",
                                  "support": 1}, store.embed([FACT_QUESTION])[0])
    plan = store.add("procedural", {"video_id": earlier, "question": FACT_QUESTION,
                                    "text": "Count(people) -> Answer", "answer": "several",
                                    "task_type": "descriptive", "workflow": "[]"},
                     store.embed([FACT_QUESTION])[0])
    episode = store.list(kind="episodic", video_id=earlier)[0]
    store.count_replays([store.get(fact), store.get(plan), episode])
    store.count_replays([store.get(fact)])
    reference = settings_for(tmp_path_factory.mktemp("reference"), **FAST)
    clip_counts = ingest(clip(CLIP), reference).counts
    return Library0(settings, earlier, clip_counts, snapshot(settings))


@pytest.fixture
def library(library0, tmp_path) -> Library0:
    """A private copy of library0 for one fault."""
    home = tmp_path / "home"
    shutil.copytree(library0.settings.home, home)
    return replace(library0, settings=replace(library0.settings, home=home))


def env_for(settings: Settings, **extra: str) -> dict:
    return {**os.environ, "MEMORYREEL_HOME": str(settings.home),
            "MEMORYREEL_MEMORY_DIR": str(settings.memory_path),
            "MEMORYREEL_TRACK_FPS": str(settings.track_fps), "PYTHONPATH": str(REPO), **extra}


# --- child processes ---------------------------------------------------------------------------

class Child:
    """A command in a child process whose stderr is read line by line as it comes."""

    def __init__(self, args: list[str], env: dict):
        self.process = subprocess.Popen(args, cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, pattern: str, timeout: float = REACH_S) -> None:
        """Until a stderr line matches `pattern`; fails if the child ends or time runs out."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                pytest.fail(f"the child ended (status {self.process.wait()}) before "
                            f"{pattern!r}:\n{''.join(self.seen[-30:])}")
            self.seen.append(line)
            if re.search(pattern, line):
                return
        self.kill_9()
        pytest.fail(f"no {pattern!r} within {timeout} s:\n{''.join(self.seen[-30:])}")

    def kill_9(self) -> list[Descendant]:
        """SIGKILL, as a crash or the OOM killer would; returns the children it had."""
        children = descendants(self.process.pid)
        self.process.kill()
        self.process.wait(timeout=GONE_S)
        return children


@dataclass
class Descendant:
    process: psutil.Process
    command: str   # read while it ran: an exited process has none


def descendants(pid: int) -> list[Descendant]:
    found = []
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    for p in children:
        try:
            found.append(Descendant(p, " ".join(p.cmdline())))
        except psutil.Error:
            found.append(Descendant(p, ""))
    return found


def llm_servers(processes: list[Descendant]) -> list[Descendant]:
    return [d for d in processes if "models.llama_server" in d.command]


def assert_exit(processes: list[Descendant], timeout: float = GONE_S) -> None:
    """Each process exits within `timeout` (a zombie has exited); awaited through a pidfd,
    which turns readable when the process ends, also for a process that is not our child."""
    deadline = time.monotonic() + timeout
    for d in processes:
        try:
            fd = os.pidfd_open(d.process.pid)
        except ProcessLookupError:
            continue
        try:
            ended, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)
        assert ended, f"still running {timeout} s after its parent was killed: {d.command}"


def pause_ingest_at(stage: str, settings: Settings) -> Child:
    """The CLI ingesting CLIP, stopped at `stage` (see tests/stage_hook.py)."""
    child = Child([sys.executable, "tests/stage_hook.py", "pause", stage, "--", "ingest",
                   str(clip(CLIP)), "--json"], env_for(settings))
    child.wait_for(f"^stage-hook: paused at {stage}$")
    return child


# --- 1. kill -9 during each ingest stage --------------------------------------------------------

# From the source copy on, a killed ingest leaves a staging folder for the next start to remove.
_COPIED = list(STAGES)[list(STAGES).index("models"):]


@pytest.mark.parametrize("stage", list(STAGES))
def test_kill_9_during_an_ingest_stage_loses_nothing_and_leaves_nothing(library, stage):
    settings = library.settings
    child = pause_ingest_at(stage, settings)
    orphans = child.kill_9()
    assert_exit(orphans)

    # The next start finds the library as it was: CLIP is not listed, half-built or not.
    assert snapshot(settings) == library.state
    assert any(p.startswith(".staging/") for p in leftovers(settings)) == (stage in _COPIED)

    again = ingest(clip(CLIP), settings)   # takes the dead child's lock at once
    assert not again.cached and again.counts == library.clip_counts
    assert leftovers(settings) == []
    after = snapshot(settings)
    assert after["videos"].pop(again.video_id) == library.clip_counts
    assert after == library.state


# --- 2. kill -9 during an answer ----------------------------------------------------------------

def test_kill_9_during_an_answer_leaves_no_llm_server_and_memory_intact(library):
    settings = library.settings
    child = Child([sys.executable, "-m", "backend", "ask", library.earlier, FACT_QUESTION],
                  env_for(settings, MEMORYREEL_LLM_SIZE="0.5b"))
    child.wait_for(r"^\s+\[\d+\] ")   # a planner step: the LLM server is up and answering
    orphans = child.kill_9()
    servers = llm_servers(orphans)
    assert len(servers) == 1, orphans
    assert_exit(servers)   # its stdin closed with the parent: it exits by itself

    after = snapshot(settings)
    assert after["videos"] == library.state["videos"]
    assert after["memories"] == library.state["memories"]
    # The fact was replayed before the kill; a count only ever grows, and none was lost.
    assert all(after["replays"].get(k, 0) >= n for k, n in library.state["replays"].items())
    replays = sqlite_utils.Database(settings.memory_path / "replays.db")
    assert replays.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    replays.close()
    store = MemoryStore(settings)
    assert store.search(FACT_QUESTION, kind="semantic", video_id=library.earlier,
                        k=1)[0].text == FACT


# --- 3. the LLM server killed mid-answer --------------------------------------------------------

def test_the_llm_server_killed_mid_answer_ends_that_answer_and_the_next_one_restarts_it(library):
    settings = replace(library.settings, llm_size="0.5b", n_solutions=1)
    gguf = weights.qwen_gguf(settings.cache_dir, settings.llm_size)
    killed: list[Descendant] = []

    def servers() -> list[Descendant]:
        return [d for d in llm_servers(descendants(os.getpid())) if str(gguf) in d.command]

    def kill_the_server(node) -> None:
        # Called by the planner after its first step, before its next LLM call.
        if not killed:
            killed.extend(servers())
            for server in killed:
                server.process.kill()
                server.process.wait(timeout=GONE_S)

    # A question no route answers by code, so the model plans it from the first step.
    question = "how many people are there"
    first = ask(library.earlier, question, settings, options=OPTIONS,
                memory=MemoryOptions.off(), on_step=kill_the_server)
    assert killed, "no LLM server was running during the answer"
    assert first.answered or first.answer.startswith("could not answer: "), first.answer
    assert "Traceback" not in first.answer

    second = ask(library.earlier, question, settings, options=OPTIONS, memory=MemoryOptions.off())
    assert second.answered, second.answer
    assert second.answer in OPTIONS and second.usage.llm_calls >= 1
    restarted = servers()
    assert restarted and {d.process.pid for d in restarted}.isdisjoint(
        d.process.pid for d in killed)
    get_embedded(gguf, settings.llm_ctx, settings.llm_threads).close()  # 0.5 GB less to carry


# --- 4. a full disk during ingest ---------------------------------------------------------------

def _disk_full_said(message: str) -> None:
    assert "disk space" in message and CLIP in message, message
    assert "Traceback" not in message


def test_a_full_disk_at_the_source_copy_is_named_and_changes_nothing(library, monkeypatch):
    # Where no small filesystem can be mounted (below), a write hook: the copy into staging fails.
    def full(*args, **kwargs):
        raise OSError(28, os.strerror(28))
    monkeypatch.setattr(shutil, "copyfile", full)
    with pytest.raises(DiskFullError) as error:
        ingest(clip(CLIP), library.settings)
    _disk_full_said(str(error.value))
    assert snapshot(library.settings) == library.state
    assert leftovers(library.settings) == []


@pytest.fixture(scope="module")
def small_disks() -> None:
    """Skips unless a private tmpfs can be mounted without root (a user namespace)."""
    try:
        done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                               "mount -t tmpfs -o size=1m tmpfs /mnt"], capture_output=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"no unshare: {e}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a user namespace: {done.stderr.decode()[-200:]}")


@pytest.mark.parametrize("stage", ["probe", "describe", "embed"])  # copy, SQLite, LanceDB
def test_a_full_disk_during_ingest_is_named_and_changes_nothing(library, small_disks, stage,
                                                               tmp_path):
    # The library on a 64 MiB tmpfs of its own that fills up at `stage`: each writer meets a
    # real ENOSPC. The mount lives as long as the shell, which copies HOME out at the end.
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    home = disk / "home"
    script = (f"mount -t tmpfs -o size=64m tmpfs {disk} && cp -a {library.settings.home} {home} "
              f"&& {sys.executable} tests/stage_hook.py fill {stage} {disk}/filler -- ingest "
              f"{clip(CLIP)} --json > {tmp_path}/stdout 2> {tmp_path}/stderr; "
              f"echo $? > {tmp_path}/status; cp -a {home} {out}")
    moved = replace(library.settings, home=home)
    subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                   cwd=REPO, env=env_for(moved), timeout=REACH_S, check=True)
    stderr = (tmp_path / "stderr").read_text()
    assert f"stage-hook: disk full at {stage}" in stderr, stderr[-3000:]
    payload = json.loads((tmp_path / "stdout").read_text())
    assert (tmp_path / "status").read_text().strip() == "2", payload
    assert payload["kind"] == "DiskFullError", payload
    _disk_full_said(payload["error"])
    after = replace(library.settings, home=out)
    assert snapshot(after) == library.state
    assert leftovers(after) == []


# --- 5. eight questions at once through the web app ---------------------------------------------

_WORDS = ["person", "2", "the first frame", "at 1 s", "walks left", "", "SELECT 1"]


class FakeEndpoint(ThreadingHTTPServer):
    """A fast OpenAI-compatible chat endpoint on 127.0.0.1 whose replies fit the JSON schema
    asked for; it counts the requests it serves at the same time."""

    daemon_threads = True
    service_s = 0.05   # each reply takes this long, so that requests the app lets overlap do

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _FakeHandler)
        self.base_url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        self.requests = self.now = self.most_at_once = 0
        self._count = threading.Lock()

    def reply(self, body: dict) -> str:
        with self._count:
            self.requests += 1
            self.now += 1
            self.most_at_once = max(self.most_at_once, self.now)
            rng = random.Random(self.requests)
        try:
            time.sleep(self.service_s)
            schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
            if schema is None:
                return "Fine."
            return json.dumps(schema_value(schema, schema.get("$defs", {}), rng, _WORDS))
        finally:
            with self._count:
                self.now -= 1


class _FakeHandler(BaseHTTPRequestHandler):
    timeout = 30  # a stuck connection cannot hold a thread for ever

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        send_json(self, 200, chat_completion(self.server.reply(body), model=body["model"], usage={
            "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}))

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def endpoint():
    with serving(FakeEndpoint()) as server:
        yield server


def test_eight_questions_at_once_through_the_app_all_answer_within_the_queue_limit(library,
                                                                                   endpoint):
    from gradio_client import Client

    from app.ui import ANSWER_CONCURRENCY

    settings = replace(library.settings, llm_base_url=endpoint.base_url, llm_model="fake",
                       llm_api_key="fake-key")
    # The app starting again after a kill -9 mid-ingest removes the staging copy it left.
    pause_ingest_at("models", settings).kill_9()
    assert leftovers(settings)
    with running_app(settings) as (url, _):
        assert leftovers(settings) == []
        client = Client(url, verbose=False)
        questions = [f"{what} {when}" for what in ("how many people are in view", "who walks left")
                     for when in ("at the start", "at 2 s", "at 5 s", "at the end")]
        jobs = [client.submit(library.earlier, q, "", api_name="/ask") for q in questions]
        answers, errors = [], []
        for job in jobs:
            try:
                answers.append(job.result(timeout=REACH_S))
            except Exception as e:  # noqa: BLE001 - counted: there must be none
                errors.append(repr(e))
    assert errors == []
    assert sorted(a["question"] for a in answers) == sorted(questions)
    for a in answers:
        assert a["answered"] or a["answer"].startswith("could not answer: "), a["answer"]
    assert endpoint.requests >= 2 * len(questions)
    assert endpoint.most_at_once == ANSWER_CONCURRENCY
