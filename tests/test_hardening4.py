"""Hardening, round four: what a new user or an attacker tried that failed before this round."""

from __future__ import annotations

import os
import subprocess
import sys

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
