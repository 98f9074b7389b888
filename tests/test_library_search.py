"""The library at scale (issue 39): 500 videos listed, searched by name and by what each holds,
and sorted; in the app, the page lists them and the search narrows the cards (the seconds the
page took are printed: a figure for a quiet machine, not a test's threshold).

The 500 videos are copies of TUD-Campus's tables under other ids, names, lengths and times; one
in fifty tracked a bicycle and one in a hundred said "harbour"."""

from __future__ import annotations

import re
import shutil
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest
import sqlite_utils

from backend import library_search
from backend.errors import InputError
from backend.library import Library
from tests.conftest import browser_page, running_app
from tests.fakes import fake_video_folder

COUNT = 500


def make_library(source_folder: Path, home: Path, count: int = COUNT) -> None:
    """`count` small videos: the source's tables and thumbnail under new ids and names."""
    videos = home / "videos"
    videos.mkdir(parents=True)
    for k in range(count):
        folder = videos / f"{k:016x}"
        folder.mkdir()
        shutil.copyfile(source_folder / "video.db", folder / "video.db")
        shutil.copyfile(source_folder / "thumb.jpg", folder / "thumb.jpg")
        db = sqlite_utils.Database(folder / "video.db")
        with db.conn:
            db.execute("UPDATE video SET id = ?, name = ?, duration = ?, ingested_at = ?",
                       [folder.name, f"clip-{k:03d}.mp4", 10.0 + k % 37,
                        f"2026-11-{1 + k % 28:02d}T{k % 24:02d}:00:{k % 60:02d}+00:00"])
            if k % 50 == 7:
                db.execute("UPDATE instances SET category = 'bicycle' WHERE id = "
                           "(SELECT MIN(id) FROM instances)")
            if k % 100 == 3:
                db.execute("INSERT INTO speech (t_start, t_end, text) VALUES "
                           "(1.0, 2.0, 'We walk down to the harbour')")
        db.close()


@pytest.fixture(scope="module")
def big(ingested, library_settings, tmp_path_factory):
    source = Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id)
    home = tmp_path_factory.mktemp("big-library")
    make_library(source.folder, home)
    return replace(library_settings, home=home, memory_dir=str(home / "memory"))


def test_a_search_finds_videos_by_name_kind_and_words_said(big):
    entries = Library(big.home).list()
    assert len(entries) == COUNT
    assert [e.name for e in library_search.find(entries, "clip-123")] == ["clip-123.mp4"]
    bikes = library_search.find(entries, "bicycle")
    assert sorted(e.name for e in bikes) == [f"clip-{k:03d}.mp4" for k in range(7, COUNT, 50)]
    assert {e.name for e in library_search.find(entries, "HARBOUR person")} == \
        {f"clip-{k:03d}.mp4" for k in range(3, COUNT, 100)}
    assert library_search.find(entries, "giraffe") == []
    # Contents match at the start of a word: "harb" is the harbour said, "arbour" is not.
    assert len(library_search.find(entries, "harb")) == 5
    assert library_search.find(entries, "arbour") == []
    assert len(library_search.find(entries, "")) == COUNT


def test_sorting_by_name_length_and_date(big):
    entries = Library(big.home).list()
    by_name = library_search.find(entries, "", "name")
    assert [e.name for e in by_name[:2]] == ["clip-000.mp4", "clip-001.mp4"]
    longest = library_search.find(entries, "", "longest")
    assert longest[0].duration == 46.0 and longest[-1].duration == 10.0
    newest = library_search.find(entries, "", "newest")
    assert newest[0].ingested_at >= newest[-1].ingested_at


def test_what_a_video_holds_is_read_once(big, monkeypatch):
    entries = Library(big.home).list()
    library_search.find(entries, "bicycle")
    opened = []
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: opened.append(a) or real(*a, **k))
    assert len(library_search.find(entries, "harbour")) == 5
    assert opened == []


def test_the_page_lists_500_videos_and_a_search_narrows_them(big):
    from playwright.sync_api import expect

    # The first load warms Gradio's caches; a person's load is the next one.
    with running_app(big) as (url, _), browser_page(url) as page:
        expect(page.locator("#library-note")).to_contain_text(f"{COUNT} videos", timeout=60_000)
        started = time.perf_counter()
        page.reload()
        expect(page.locator("#library-note")).to_contain_text(f"{COUNT} videos", timeout=30_000)
        expect(page.locator("#library")).to_contain_text("clip-", timeout=30_000)
        loaded = time.perf_counter() - started
        page.locator("#library-search textarea, #library-search input").first.fill("bicycle")
        expect(page.locator("#library-note")).to_contain_text(f"10 of {COUNT} match",
                                                              timeout=30_000)
        # The cards now shown are bicycle clips only.
        shown = set(re.findall(r"clip-\d{3}\.mp4", page.locator("#library").inner_text()))
        assert shown and shown <= {f"clip-{k:03d}.mp4" for k in range(7, COUNT, 50)}, shown
    print(f"the page listed {COUNT} videos in {loaded:.2f} s")  # 3 s is the goal on a quiet machine


def test_a_search_finds_videos_by_what_people_do_and_what_the_picture_shows(tmp_path):
    riding, bird, older = "a" * 16, "b" * 16, "c" * 16
    for video_id in (riding, bird, older):
        fake_video_folder(tmp_path / "videos" / video_id, video_id)
    with sqlite3.connect(tmp_path / "videos" / riding / "video.db") as db:
        db.executemany("INSERT INTO actions (instance_id, action, t_start, t_end, score, evidence, "
                       "other_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(1, "riding", 2.0, 9.0, 0.9, "hips on the horse #2", 2),
                        (1, "waving", 3.0, 4.0, 0.7, "wrist above the shoulder", None)])
    with sqlite3.connect(tmp_path / "videos" / bird / "video.db") as db:
        db.execute("INSERT INTO tags (t_start, t_end, tag, wnid, score) VALUES "
                   "(0.0, 5.0, 'sulphur-crested cockatoo', 'n01819313', 0.8)")
    with sqlite3.connect(tmp_path / "videos" / older / "video.db") as db:
        db.execute("DROP TABLE actions")  # ingested before there were actions and tags
        db.execute("DROP TABLE tags")
    entries = Library(tmp_path).list()

    def found(text: str) -> set[str]:
        return {e.video_id for e in library_search.find(entries, text)}

    # An action by its word or its stem; a tag by any word of its label, at a word's start.
    for text in ("riding", "ride", "rides", "rid", "waving", "wave"):
        assert found(text) == {riding}, text
    for text in ("cockatoo", "sulphur", "crested", "COCK"):
        assert found(text) == {bird}, text
    assert found("ride cockatoo") == set() and found("atoo") == set()
    assert found("walk") == set() and found("") == {riding, bird, older}


def test_a_search_past_the_limit_is_refused_at_once_and_one_at_it_searches(big):
    """140,000 characters over 500 videos took 22 s (every word searched in every video)."""
    entries = Library(big.home).list()
    started = time.perf_counter()
    with pytest.raises(InputError, match="The search is 140,000 characters long; the limit is 200"):
        library_search.find(entries, "harbour " * 17_500)
    assert time.perf_counter() - started < 1
    found = library_search.find(entries, "harbour " * 25)  # 200 characters
    assert sorted(e.name for e in found) == [f"clip-{k:03d}.mp4" for k in range(3, COUNT, 100)]
