"""Importing the server's folder from the page (issue 25): MEMORYREEL_IMPORT_DIR only, per-file
progress, a summary, the library refreshed; off and hidden without the setting; behind the login.

The folder holds two short real clips (symlinks) and a text file named .mp4; the handler runs
the batch ingest for real, over one worker process.
"""

from __future__ import annotations

from dataclasses import replace

import gradio as gr
import httpx
import pytest

from app import folder_import, handlers, layout
from backend import config
from backend.errors import SettingsError
from tests.conftest import clip, running_app, settings_for

CLIPS = ("mot15_TUD-Campus.mp4", "intel_bottle-detection.mp4")


@pytest.fixture(scope="module")
def importing(tmp_path_factory) -> config.Settings:
    source = tmp_path_factory.mktemp("import")
    for name in CLIPS:
        (source / name).symlink_to(clip(name))
    (source / "notes").mkdir()
    (source / "notes" / "broken.mp4").write_text("a text file, not a video\n")
    return settings_for(tmp_path_factory.mktemp("import-home") / "home", import_dir=str(source))


class Recorded:
    """Stands in for gr.Progress: what the handler reported, in order."""

    def __init__(self):
        self.calls: list[tuple[float | None, str]] = []

    def __call__(self, fraction, desc=""):
        self.calls.append((fraction, desc))


def test_the_folder_is_listed_and_imported_with_progress_per_file(importing):
    listed = folder_import.listing(importing)
    assert listed.startswith("3 video files")
    assert all(f"`{name}`" in listed for name in CLIPS) and "`notes/broken.mp4`" in listed
    progress = Recorded()
    summary, after, cards, chooser, note, ids = handlers.on_import(importing, progress=progress)
    assert "**2 ingested**, 0 already in the library, **1 failed**" in summary
    assert "`notes/broken.mp4`: 'broken.mp4' is not a video file FFmpeg can read" in summary
    assert str(importing.import_dir) not in summary  # no server path reaches the page
    assert len(ids) == 2 and len(cards.samples) == 2 and after == listed
    finished = [desc for _, desc in progress.calls if " done: " in desc]
    assert sorted(finished[i].split(": ", 1)[1] for i in range(3)) == sorted(
        [f"{CLIPS[0]} ingested", f"{CLIPS[1]} ingested", "notes/broken.mp4 failed"])
    assert progress.calls[-1][0] == 1.0  # every byte to ingest is done

    again, *_, ids_again = handlers.on_import(importing, progress=Recorded())
    assert "**0 ingested**, 2 already in the library, **1 failed**" in again
    assert all(f"`{name}`" in again.split("Already in the library: ")[1] for name in CLIPS)
    assert ids_again == ids


def test_without_the_setting_the_control_is_hidden_and_the_import_refused(tmp_path):
    off = settings_for(tmp_path / "home", import_dir="")
    with pytest.raises(gr.Error, match="Importing from a server folder is off"):
        handlers.on_import(off, progress=Recorded())
    assert folder_import.listing(off) == ""
    for settings, shown in ((off, False), (replace(off, import_dir=str(tmp_path)), True)):
        with gr.Blocks():
            assert layout.page(settings).library.importer.box.visible is shown


def test_a_folder_that_is_gone_or_empty_is_said_so(tmp_path):
    gone = settings_for(tmp_path / "home", import_dir=str(tmp_path / "unmounted"))
    assert folder_import.listing(gone).startswith("The import folder 'unmounted' is not there")
    with pytest.raises(gr.Error, match="'unmounted' is not there on the server"):
        handlers.on_import(gone, progress=Recorded())
    (tmp_path / "empty").mkdir()
    empty = replace(gone, import_dir=str(tmp_path / "empty"))
    assert folder_import.listing(empty) == "The server folder holds no video files."
    with pytest.raises(gr.Error, match="holds no video files"):
        handlers.on_import(empty, progress=Recorded())


def test_an_import_folder_that_is_a_file_is_refused_at_load(monkeypatch, tmp_path):
    (tmp_path / "videos.txt").write_text("")
    monkeypatch.setenv("MEMORYREEL_IMPORT_DIR", str(tmp_path / "videos.txt"))
    with pytest.raises(SettingsError, match="MEMORYREEL_IMPORT_DIR is .* a file, not a folder"):
        config.load()


def test_the_import_runs_for_a_logged_in_user_only(tmp_path):
    settings = settings_for(tmp_path / "home", import_dir=str(tmp_path), auth="ada:lovelace")
    with running_app(settings) as (url, demo):
        index = next(i for i, fn in demo.fns.items() if fn.name == "on_import")
        joined = httpx.post(f"{url}gradio_api/queue/join",
                            json={"fn_index": index, "data": [None], "session_hash": "visitor"})
    assert joined.status_code == 401
