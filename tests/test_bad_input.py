"""Every kind of bad file gets its own clear message and leaves the library exactly as it was."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from backend.evaluation.ingest_runs import concat_copies
from backend.errors import InputError
from backend.ingest.pipeline import ingest
from backend.library import Library, content_hash, video_id_for
from tests.conftest import REPO, clip, settings_for


def _snapshot(home: Path) -> dict[str, float]:
    """Every file under the library with its size and mtime: any change shows."""
    if not home.exists():
        return {}
    return {str(p.relative_to(home)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in home.rglob("*") if p.is_file()}


def _make_bad(kind: str, folder: Path) -> Path:
    tud = clip("mot15_TUD-Campus.mp4").read_bytes()
    avi = clip("bgslib_video02_highway.avi").read_bytes()
    if kind == "empty":
        path = folder / "empty.mp4"
        path.write_bytes(b"")
    elif kind == "not a video":
        path = folder / "notes.mp4"
        path.write_text("This is a shopping list, not a video.\n" * 50)
    elif kind == "truncated mp4":
        path = folder / "cut.mp4"
        path.write_bytes(tud[: len(tud) // 2])
    elif kind == "truncated avi":
        path = folder / "cut.avi"
        path.write_bytes(avi[: len(avi) // 3])
    elif kind == "unknown codec":
        data = bytearray(avi)
        header = data.find(b"strf")
        data[header + 24:header + 28] = b"ZZZZ"  # BITMAPINFOHEADER biCompression
        path = folder / "odd-codec.avi"
        path.write_bytes(bytes(data))
    elif kind == "damaged part-way":
        data = bytearray(tud)
        for k in range(len(data) // 3, 2 * len(data) // 3):
            data[k] = (data[k] * 7 + 13) & 255
        path = folder / "damaged.mp4"
        path.write_bytes(bytes(data))
    elif kind == "wrong type":
        path = folder / "photo.jpg"
        path.write_bytes(b"\xff\xd8\xff\xe0" + b"0" * 100)
    else:
        raise ValueError(kind)
    return path


BAD_CASES = {
    "empty": "empty \\(0 bytes\\)",
    "not a video": "not a video file",
    "truncated mp4": "index is missing: it looks truncated",
    "truncated avi": "truncated: its header declares 750 frames",
    "unknown codec": "codec this build cannot decode",
    "damaged part-way": "fails to decode from frame \\d+ .* damaged part-way",
    "wrong type": "not a supported video type",
}


@pytest.fixture
def settings(tmp_path, ingested, library_settings):
    # A library that already holds a video, so "unchanged" covers other videos' files too.
    ingested("mot15_TUD-Campus.mp4")
    home = tmp_path / "lib"
    shutil.copytree(library_settings.home, home)
    return settings_for(home)


@pytest.mark.parametrize("kind", list(BAD_CASES))
def test_bad_file_gets_specific_message_and_library_unchanged(kind, tmp_path, settings):
    bad = _make_bad(kind, tmp_path)
    before = _snapshot(settings.home)
    assert Library(settings.home).list(), "the library should hold a video already"
    with pytest.raises(InputError, match=BAD_CASES[kind]) as refused:
        ingest(bad, settings)
    # The reason and the file's name only: no folder path (decord and FFmpeg put one in theirs).
    assert str(tmp_path) not in str(refused.value)
    assert _snapshot(settings.home) == before
    assert not list((settings.home / ".staging").glob("*"))
    assert not (settings.home / ".locks").exists()


def test_model_failure_mid_ingest_leaves_no_half_written_video(tmp_path, settings, monkeypatch):
    from backend.ingest import pipeline as ingest_module

    # Earlier tests may have ingested this clip into the library copied here: then it would
    # come back cached, without a frame pass to fail.
    library = Library(settings.home)
    bottles = video_id_for(content_hash(clip("intel_bottle-detection.mp4")))
    if library.has(bottles):
        library.delete(bottles)
    before = _snapshot(settings.home)
    calls = {"n": 0}
    real = ingest_module.frame_pass.scan

    def failing_frame_pass(*args, **kwargs):
        calls["n"] += 1
        raise RuntimeError("detector crashed")
    monkeypatch.setattr(ingest_module.frame_pass, "scan", failing_frame_pass)
    with pytest.raises(RuntimeError, match="detector crashed"):
        ingest(clip("intel_bottle-detection.mp4"), settings)
    monkeypatch.setattr(ingest_module.frame_pass, "scan", real)
    assert calls["n"] == 1
    assert _snapshot(settings.home) == before
    assert not list((settings.home / ".staging").glob("*"))


def test_name_with_spaces_and_unicode_ingests(tmp_path, settings):
    odd = tmp_path / "Café ☕ campus walk — 2026.mp4"
    shutil.copyfile(clip("mot15_TUD-Campus.mp4"), odd)
    result = ingest(odd, settings)
    # Same content as the library's TUD-Campus: recognised by hash, not re-ingested.
    assert result.cached
    twice = tmp_path / "Ünïcode walk × 2.mp4"
    concat_copies(clip("mot15_TUD-Campus.mp4"), twice, 2)
    fresh = ingest(twice, settings)
    assert not fresh.cached
    entry = Library(settings.home).get(fresh.video_id)
    assert entry.name == twice.name
    assert entry.table_counts()["detections"] > 0


@pytest.mark.parametrize("kind", ["empty", "unknown codec", "wrong type"])
def test_cli_reports_bad_file_with_nonzero_exit(kind, tmp_path, settings):
    bad = _make_bad(kind, tmp_path)
    env = dict(os.environ, MEMORYREEL_HOME=str(settings.home))
    before = _snapshot(settings.home)
    done = subprocess.run([sys.executable, "-m", "backend", "ingest", str(bad), "--json"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    payload = json.loads(done.stdout)
    assert payload["kind"] == "InputError"
    assert bad.name in payload["error"]
    assert _snapshot(settings.home) == before
