"""Hardening, round four: what a new user or an attacker tried that failed before this round."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from backend.errors import ExportError
from backend.exports import answer as answer_export
from tests.conftest import REPO, clip, leftovers, running_app, settings_for
from tests.test_cli_json import cli


def plain_cli(*args: str, home, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python -m backend ARGS` without --json (tests.test_cli_json.cli reads its JSON)."""
    return subprocess.run([sys.executable, "-m", "backend", *args],
                          env={**os.environ, "MEMORYREEL_HOME": str(home), "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=timeout)


def test_a_batch_in_which_every_file_fails_exits_1_and_names_a_dangling_link(tmp_path):
    folder = tmp_path / "footage"
    folder.mkdir()
    (folder / "notes.mp4").write_text("a shopping list, not a video\n" * 20)
    (folder / "empty.avi").write_bytes(b"")
    (folder / "gone.mp4").symlink_to(tmp_path / "moved-away.mp4")  # the file it named was moved
    home = tmp_path / "home"
    status, payload, _ = cli("ingest", str(folder), "--json", home=home)
    assert status == 1 and not payload["ingested"] and not payload["cached"]
    reasons = {row["path"].rsplit("/", 1)[-1]: row["reason"] for row in payload["failed"]}
    assert set(reasons) == {"notes.mp4", "empty.avi", "gone.mp4"}
    assert "is a link to" in reasons["gone.mp4"] and "moved-away.mp4" in reasons["gone.mp4"]
    done = plain_cli("ingest", str(folder), home=home)
    assert done.returncode == 1 and "0 ingested, 0 already in the library, 3 failed" in done.stdout


def test_an_export_through_a_hard_link_replaces_the_name_not_the_database(tmp_path, ingested,
                                                                          library_settings):
    done = ingested("mot15_TUD-Campus.mp4")
    home = library_settings.home
    database = home / "videos" / done.video_id / "video.db"
    before = database.read_bytes()
    link = tmp_path / "tracks.csv"
    os.link(database, link)  # outside the library folder, yet the same file
    status, payload, _ = cli("export", done.video_id, "--format", "csv", "--out", str(link),
                             "--json", home=home)
    assert status == 0 and payload["out"] == str(link)
    assert database.read_bytes() == before and link.read_text().startswith("instance_id")
    status, payload, _ = cli("info", done.video_id, "--json", home=home)
    assert status == 0 and payload["video_id"] == done.video_id


@pytest.mark.parametrize("out, words", [
    ("/", "--out / is a folder: give a file name in it"),
    ("{tmp}/notes.txt/x.csv", "goes through '{tmp}/notes.txt', which is a file, not a folder"),
    ("/dev/full", "--out /dev/full is not a regular file (a device or a pipe)"),
])
def test_an_export_to_where_no_file_can_be_is_a_clear_message(out, words, tmp_path, ingested,
                                                              library_settings):
    done = ingested("mot15_TUD-Campus.mp4")
    (tmp_path / "notes.txt").write_text("kept as it is\n")
    out, words = out.format(tmp=tmp_path), words.format(tmp=tmp_path)
    status, payload, _ = cli("export", done.video_id, "--format", "csv", "--out", out, "--json",
                             home=library_settings.home)
    assert (status, payload["kind"]) == (2, "ExportError") and words in payload["error"], payload
    assert (tmp_path / "notes.txt").read_text() == "kept as it is\n"


def _answer_with_chain(video_id: str, nodes: int) -> dict:
    """A valid answer file whose planner tree is one chain of `nodes` nodes."""
    tree = [{"id": i, "parent": i - 1 if i else None, "thought": f"step {i}"} for i in range(nodes)]
    return {"video_id": video_id, "question": "how many people?", "answer": "3", "evidence": [],
            "tree": tree}


def test_an_answer_file_nested_without_end_or_with_a_huge_tree_is_named(tmp_path, ingested,
                                                                        library_settings):
    done = ingested("mot15_TUD-Campus.mp4")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    status, payload, _ = cli("export", done.video_id, "--format", "json", "--answer", str(deep),
                             "--json", home=library_settings.home)
    assert (status, payload["kind"]) == (2, "ExportError"), payload
    assert "'deep.json' nests its JSON too deeply" in payload["error"]
    chain = _answer_with_chain(done.video_id, answer_export.MAX_TREE_NODES + 1)
    with pytest.raises(ExportError, match="'chain.json' is not an answer .*tree: List should "
                                          "have at most 1000 items"):
        answer_export.parse(chain, "chain.json")
    longest = answer_export.parse(_answer_with_chain(done.video_id, 1000), "long.json")
    assert len(answer_export.markdown(longest, "campus.mp4", [])) < 2**21


def test_ask_all_videos_without_a_question_says_the_question_is_missing(tmp_path):
    status, payload, _ = cli("ask", "--all-videos", "--json", home=tmp_path / "home")
    assert (status, payload["kind"]) == (2, "UsageError")
    assert payload["error"].startswith("the QUESTION is missing") and "VIDEO_ID" not in payload["error"]


def test_distill_steps_are_bounded(tmp_path):
    status, payload, _ = cli("memory", "distill", "--steps", "1000000000", "--json",
                             home=tmp_path / "home")
    assert (status, payload["kind"]) == (2, "InputError")
    assert "from 1 to 5,000, not 1,000,000,000" in payload["error"]


@pytest.mark.parametrize("json_mode", [True, False])
def test_ctrl_c_ends_a_command_with_a_message_and_leaves_nothing(json_mode, tmp_path):
    """Ctrl-C exited 1 with a traceback and no JSON; mid-ingest here, it says so and the
    library is as it was."""
    home = tmp_path / "home"
    command = [sys.executable, "-m", "backend", "ingest", str(clip("mot15_TUD-Campus.mp4")),
               *(["--json"] if json_mode else ["--quiet"])]
    child = subprocess.Popen(command, env={**os.environ, "MEMORYREEL_HOME": str(home),
                                           "PYTHONPATH": str(REPO)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(home.glob(".staging/*")) and time.monotonic() < deadline:
        time.sleep(0.2)  # until the video is being built
    time.sleep(1)
    assert child.poll() is None
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    said = "Interrupted (Ctrl-C): `ingest` stopped before it finished."
    assert child.returncode == 130 and "Traceback" not in err, err[-2000:]
    if json_mode:
        assert json.loads(out) == {"error": said, "kind": "Interrupted"}
    else:
        assert said in err and not out
    assert not list((home / "videos").glob("*")) and not leftovers(settings_for(home))


def _routes(app) -> list:
    """The app's routes, those of routers it includes too (FastAPI keeps those apart)."""
    return [r for route in app.routes
            for r in (route.original_router.routes if hasattr(route, "original_router") else [route])]


def test_with_a_login_every_route_but_the_login_page_asks_for_it(tmp_path):
    """The heartbeat stream and startup-events answered 200 to a client that never logged in
    (and the stream stayed open); every route of the app is tried, its parameters filled in."""
    from app import login_wall

    settings = settings_for(tmp_path / "home", auth="ada:lovelace")
    with running_app(settings) as (url, demo):
        base = url.rstrip("/")
        paths = {re.sub(r"\{[^}]*\}", "x", route.path) for route in _routes(demo.app)
                 if "GET" in (getattr(route, "methods", None) or ())}
        guarded = sorted(p for p in paths if not login_wall.for_login_page(p))
        assert {"/gradio_api/heartbeat/x", "/gradio_api/startup-events"} <= set(guarded)
        with httpx.Client(timeout=10) as stranger:
            answered = {path: stranger.get(base + path).status_code for path in guarded}
            assert answered == dict.fromkeys(guarded, 401)
            assert stranger.post(f"{base}/gradio_api/reset", json={}).status_code == 401
            login_page = stranger.get(url)
            assert login_page.status_code == 200 and "auth_required" in login_page.text
        with httpx.Client(timeout=10) as ada:
            assert ada.post(f"{url}login", data={"username": "ada",
                                                 "password": "lovelace"}).status_code == 200
            assert ada.get(f"{base}/gradio_api/startup-events").status_code == 200
            assert ada.get(f"{base}/config").status_code == 200


# A fake ingest, run by `python -m` as the real one is: it presses Ctrl-C the way each failure
# happened mid-ingest, then reports a step as the frame pass does, then would finish.
_PRESSING = '''
import ctypes, os, signal, sys
import backend.ingest.pipeline
from backend.cli import main

def press():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(10 ** 7):  # Python runs the handler between instructions
        pass

def through_pyrun_string():
    run = ctypes.pythonapi.PyRun_String
    run.restype, run.argtypes = ctypes.py_object, [ctypes.c_char_p, ctypes.c_int,
                                                   ctypes.py_object, ctypes.py_object]
    run(b"press()", 258, {"press": press}, {})

class Dropped:
    def __del__(self):
        press()

def in_a_del():
    Dropped()

def ingest(path, settings, progress):
    {how}()
    progress("frames", 1, 2)
    print("ran on to the end", file=sys.stderr)
    raise SystemExit(0)

backend.ingest.pipeline.ingest = ingest
sys.exit(main(["ingest", sys.argv[1], "--quiet"]))
'''


def _press(how: str, tmp_path, **popen) -> subprocess.CompletedProcess:
    (tmp_path / "presses").mkdir()
    (tmp_path / "presses" / "__main__.py").write_text(_PRESSING.replace("{how}", how))
    return subprocess.run([sys.executable, "-m", "presses", str(clip("mot15_TUD-Campus.mp4"))],
                          env={**os.environ, "MEMORYREEL_HOME": str(tmp_path / "home"),
                               "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])},
                          capture_output=True, text=True, timeout=120, **popen)


@pytest.mark.parametrize("how", ["through_pyrun_string", "in_a_del"])
def test_ctrl_c_wherever_a_library_catches_it_ends_the_command_with_130(how, tmp_path):
    """A KeyboardInterrupt that passed through code an extension ran (PyRun_String) made the
    interpreter kill itself with SIGINT after our message (status -2); one raised in a
    `__del__` was dropped and the ingest ran on to its end (status 0); once `check` ended it,
    Python still printed it as "Exception ignored ... Traceback" before our message."""
    done = _press(how, tmp_path)
    assert done.returncode == 130, done.stderr[-2000:]
    assert "Interrupted (Ctrl-C): `ingest` stopped" in done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert "ran on to the end" not in done.stderr


def test_a_command_started_with_ctrl_c_ignored_runs_on(tmp_path):
    """A shell starts background jobs with SIGINT ignored so that Ctrl-C spares them: the
    command's own handler must not take that away."""
    done = _press("through_pyrun_string", tmp_path,
                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert done.returncode == 0 and "ran on to the end" in done.stderr, done.stderr[-2000:]


def test_quiet_means_no_bars_and_no_library_chatter(tmp_path):
    """`ingest --quiet` still drew transformers' "Loading weights" bar, ultralytics announced
    each of its five detectors and LanceDB warned that a new table would be created."""
    done = plain_cli("ingest", str(clip("mot15_TUD-Campus.mp4")), "--quiet",
                     home=tmp_path / "home", timeout=600)
    assert done.returncode == 0 and "ingested as" in done.stdout, done.stderr[-2000:]
    for chatter in ("Loading weights", "ONNX Runtime", "it will be created", "%|"):
        assert chatter not in done.stderr, done.stderr[-2000:]
