"""Hardening, round four: what a new user or an attacker tried that failed before this round."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.test_cli_json import cli


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
    done = subprocess.run([sys.executable, "-m", "backend", "ingest", str(folder)],
                          env={**os.environ, "MEMORYREEL_HOME": str(home), "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120)
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
