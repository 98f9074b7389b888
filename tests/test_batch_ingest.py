"""A folder ingested at once (issue 25): over worker processes, resumed after a kill, and as Ray
tasks on a local Ray instance, on real clips and a broken file.

One folder serves every test: three real clips (symlinks), a second copy of one of them in a
sub-folder, a text file named .mp4, and a hidden macOS metadata file that is not footage. The
run killed half-way and finished with `--workers 1` is the single-process reference; the
two-worker run and the Ray run must give every video the same rows in every table.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from backend.batch import files, pool
from backend.batch.plan import FileOutcome
from backend.library import Library
from tests.conftest import REPO, clip, leftovers, settings_for

CLIPS = ("autoeditor_example_speech.mp4", "intel_bottle-detection.mp4", "mot15_TUD-Campus.mp4")
BROKEN_REASON = "is not a video file FFmpeg can read"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("footage")
    for name in CLIPS:
        (root / name).symlink_to(clip(name))
    (root / "sub").mkdir()
    # The same content under another name (a copy: a link to the same file is that file, and is
    # listed once).
    shutil.copyfile(clip("mot15_TUD-Campus.mp4"), root / "sub" / "campus-again.mp4")
    (root / "broken.mp4").write_text("a text file, not a video\n")
    (root / "._broken.mp4").write_bytes(b"\0\5\26\7")  # macOS metadata: skipped, not failed
    return root


def start(home: Path, *args: str) -> subprocess.Popen:
    environment = {**os.environ, "MEMORYREEL_HOME": str(home), "PYTHONPATH": str(REPO),
                   "YOLO_CONFIG_DIR": str(home.parent / f"yolo-{home.name}")}
    # A session of its own, so that the test can kill the run with its worker processes.
    return subprocess.Popen([sys.executable, "-m", "backend", "ingest", *args, "--json"],
                            cwd=REPO, env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def run(home: Path, *args: str) -> dict:
    child = start(home, *args)
    out, err = child.communicate(timeout=900)
    assert child.returncode == 0, err[-3000:]
    return json.loads(out)


def names(entries: list[dict]) -> list[str]:
    return sorted(Path(e["path"]).name for e in entries)


# Tables whose rows Whisper decides. It (CTranslate2) hears slightly differently with another
# thread count (a worker of two has one thread, a lone worker two): fresh-clone runs cut the
# speech clip's 45 words into 3 segments in one and 4 in the other, and heard a 46th word once;
# the graph's word nodes follow. So `same_library` compares the words said, not these counts.
_HEARD = {"speech", "speech_words", "graph_nodes", "graph_edges"}


def rows(home: Path) -> dict[str, dict[str, int]]:
    return {e.video_id: {table: n for table, n in e.table_counts().items() if table not in _HEARD}
            for e in Library(home).list()}


def words_said(home: Path) -> dict[str, list[str]]:
    said = {}
    for e in Library(home).list():
        with sqlite3.connect(e.db_path) as conn:
            said[e.video_id] = [w.strip().strip(".,!?").lower() for (w,) in
                                conn.execute("SELECT word FROM speech_words ORDER BY t_start, rowid")]
    return said


def same_library(a: Path, b: Path) -> bool:
    """The same videos with the same rows, and nine words in ten said alike."""
    heard_a, heard_b = words_said(a), words_said(b)
    return rows(a) == rows(b) and all(
        SequenceMatcher(None, heard_a[v], heard_b[v]).ratio() >= 0.9 for v in heard_a)


@pytest.fixture(scope="module")
def resumed(folder, tmp_path_factory) -> tuple[Path, list[str], dict]:
    """A `--workers 1` run killed (with its worker) once the first video is in the library and
    the next is half-built, then run again: (home, the videos there after the kill, the second
    run's summary)."""
    home = tmp_path_factory.mktemp("resumed") / "home"
    child = start(home, str(folder), "--workers", "1")
    deadline = time.monotonic() + 600
    while not (list((home / "videos").glob("*/video.db")) and half_built(home)):
        assert child.poll() is None and time.monotonic() < deadline, child.stderr.read()[-3000:]
        time.sleep(0.1)
    os.killpg(child.pid, signal.SIGKILL)
    child.communicate()
    after_kill = sorted(p.name for p in (home / "videos").iterdir())
    # Nothing half-written in the library: every folder there is a whole video.
    assert len(after_kill) == len(Library(home).list()) >= 1
    return home, after_kill, run(home, str(folder), "--workers", "1")


def half_built(home: Path) -> list[Path]:
    """The staging folders of ingests under way."""
    return [p for p in (home / ".staging").glob("*") if p.is_dir()]


def test_a_killed_run_finishes_the_rest_on_the_next(resumed):
    home, after_kill, summary = resumed
    assert len(after_kill) < len(CLIPS)
    cached = [e for e in summary["cached"] if Path(e["path"]).parent.name != "sub"]
    assert sorted(e["video_id"] for e in cached) == after_kill
    assert len(summary["ingested"]) == len(CLIPS) - len(after_kill)
    assert len(rows(home)) == len(CLIPS)
    # What the killed ingest left (its staging folder, its lock) is gone.
    assert leftovers(settings_for(home)) == []


@pytest.fixture(scope="module")
def two_workers(folder, tmp_path_factory) -> tuple[Path, dict, dict]:
    """The folder with two workers, then again: (home, first summary, second summary)."""
    home = tmp_path_factory.mktemp("two") / "home"
    return home, run(home, str(folder), "--workers", "2"), run(home, str(folder), "--workers", "2")


def test_every_clip_is_ingested_once_and_the_broken_file_fails_with_its_reason(two_workers):
    home, first, _ = two_workers
    assert names(first["ingested"]) == sorted(CLIPS)
    assert names(first["failed"]) == ["broken.mp4"]
    assert BROKEN_REASON in first["failed"][0]["reason"]
    # The second copy was never ingested: it is the first copy's video.
    campus = next(e for e in first["ingested"] if e["path"].endswith("mot15_TUD-Campus.mp4"))
    assert first["cached"] == [{"path": str(Path(campus["path"]).parent / "sub" / "campus-again.mp4"),
                                "video_id": campus["video_id"]}]
    assert first["engine"].startswith("2 worker processes, ")
    assert len({e["worker"] for e in first["ingested"]}) == 2
    assert all(e["peak_rss_mb"] > 100 and e["duration"] > 0 for e in first["ingested"])
    assert leftovers(settings_for(home)) == []


def test_a_second_run_does_nothing(two_workers):
    _, first, second = two_workers
    assert second["ingested"] == []
    assert names(second["cached"]) == sorted([*CLIPS, "campus-again.mp4"])
    assert names(second["failed"]) == ["broken.mp4"]
    assert second["seconds"] < first["seconds"] / 3


def test_two_workers_give_the_rows_of_one(two_workers, resumed):
    assert same_library(two_workers[0], resumed[0])


def test_ray_tasks_give_the_rows_of_one_process(folder, resumed, tmp_path):
    ray = pytest.importorskip("ray")
    from backend.batch.runner import ingest_all

    settings = settings_for(tmp_path / "home")
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        summary = ingest_all([str(folder)], settings, ray_address="auto")
    finally:
        ray.shutdown()
    assert names(summary.as_dict()["ingested"]) == sorted(CLIPS), summary
    assert [BROKEN_REASON in o.reason for o in summary.of("failed")] == [True]
    assert summary.engine == "Ray (2 CPUs, 1 a task)"
    assert same_library(settings.home, resumed[0])
    assert leftovers(settings) == []


def test_folders_and_globs_give_video_files_once_and_never_the_library(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/x.mp4", "a/b/y.MOV", "a/notes.txt", "a/.hidden.mp4", "z.avi"):
        (tmp_path / name).write_bytes(b"0")
    home = tmp_path / "a" / "library"
    (home / "videos" / "0123456789abcdef").mkdir(parents=True)
    (home / "videos" / "0123456789abcdef" / "source.mp4").write_bytes(b"0")
    found, unmatched = files.expand([str(tmp_path / "a"), str(tmp_path / "*.avi"),
                                     str(tmp_path / "a" / "x.mp4"), str(tmp_path / "*.mkv"),
                                     str(tmp_path / "a" / "notes.txt")], home)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == \
        ["a/b/y.MOV", "a/x.mp4", "z.avi", "a/notes.txt"]
    assert unmatched == [str(tmp_path / "*.mkv")]
    assert "matches no video file" in files.why_none(unmatched[0])
    assert files.is_batch([str(tmp_path / "a")]) and files.is_batch([str(tmp_path / "*.avi")])
    assert not files.is_batch([str(tmp_path / "z.avi")]) and not files.is_batch(["missing.mp4"])


def ingest_or_die(path: str, settings) -> FileOutcome:
    """A stand-in for a pool worker's ingest whose process dies at `crash.mp4`, as one would on
    a crash in native code or the kernel's out-of-memory kill."""
    if path.endswith("crash.mp4"):
        os._exit(9)
    return FileOutcome(path, video_id="0123456789abcdef")


def test_a_worker_that_dies_fails_its_file_and_a_fresh_pool_takes_the_rest(monkeypatch, tmp_path):
    monkeypatch.setattr(pool, "ingest_file", ingest_or_die)
    outcomes = []
    pool.run([Path("a.mp4"), Path("crash.mp4"), Path("b.mp4")], settings_for(tmp_path), 1,
             outcomes.append)
    assert [(o.path, o.state) for o in outcomes] == [("a.mp4", "ingested"), ("crash.mp4", "failed"),
                                                    ("b.mp4", "ingested")]
    assert "worker process died" in outcomes[1].reason


def test_only_a_run_on_ray_imports_ray():
    code = ("import sys; from backend import cli; from backend.batch import runner; "
            "cli.build_parser(); print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
