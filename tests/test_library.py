"""The library's own guarantees, without models: ids are checked, leftovers are cleaned only when
no live process owns them, and ingests of the same video take turns."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from backend.errors import NotFoundError
from backend.library import Library, check_video_id
from tests.conftest import REPO
from tests.fakes import fake_video_folder

VIDEO_ID = "0123456789abcdef"


def _fake_video(folder: Path, video_id: str = VIDEO_ID) -> None:
    """A folder with the `video` row the library reads (no episodic memory needed here)."""
    fake_video_folder(folder, video_id)


def _hold_lock(path: Path) -> subprocess.Popen:
    """A child process that holds an exclusive flock on `path` until killed."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time\n"
         f"f = open({str(path)!r}, 'a+b'); fcntl.flock(f, fcntl.LOCK_EX)\n"
         "print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "locked"
    return child


@pytest.mark.parametrize("bad", ["..", "../..", "", "0123456789ABCDEF", "0123456789abcde",
                                 "0123456789abcdef0", "0123456789abcde/", "x" * 16, "/etc/passwd"])
def test_malformed_video_ids_are_refused_before_any_path_is_built(tmp_path, bad):
    (tmp_path / "video.db").write_text("a stray file at the top of HOME")
    library = Library(tmp_path)
    with pytest.raises(NotFoundError, match="not a video id"):
        check_video_id(bad)
    with pytest.raises(NotFoundError, match="not a video id"):
        library.get(bad)
    with pytest.raises(NotFoundError, match="not a video id"):
        library.folder(bad)
    assert not library.has(bad)


def test_a_well_formed_id_not_in_the_library_is_not_found(tmp_path):
    with pytest.raises(NotFoundError, match="No video with id"):
        Library(tmp_path).get(VIDEO_ID)


def test_delete_leaves_no_folder_behind(tmp_path):
    library = Library(tmp_path)
    _fake_video(library.videos_dir / VIDEO_ID)
    assert library.get(VIDEO_ID).name == "clip.mp4"
    library.delete(VIDEO_ID)
    assert not library.has(VIDEO_ID)
    assert list((tmp_path / ".staging").iterdir()) == []


def test_staging_is_removed_on_failure_and_on_success(tmp_path):
    library = Library(tmp_path)
    with pytest.raises(RuntimeError):
        with library.staging(VIDEO_ID) as folder:
            (folder / "partial").write_text("x")
            raise RuntimeError("a stage failed")
    assert list((tmp_path / ".staging").iterdir()) == []
    assert not library.has(VIDEO_ID)
    with library.staging(VIDEO_ID) as folder:
        _fake_video(folder)
    assert library.has(VIDEO_ID)
    assert list((tmp_path / ".staging").iterdir()) == []


def test_an_incomplete_video_folder_is_replaced_not_an_error(tmp_path):
    library = Library(tmp_path)
    (library.videos_dir / VIDEO_ID).mkdir(parents=True)
    (library.videos_dir / VIDEO_ID / "source.mp4").write_text("half a copy")
    with library.staging(VIDEO_ID) as folder:
        _fake_video(folder)
    assert library.get(VIDEO_ID).name == "clip.mp4"
    assert not (library.videos_dir / VIDEO_ID / "source.mp4").exists()


def test_leftovers_are_removed_unless_a_live_process_owns_them(tmp_path):
    library = Library(tmp_path)
    staging = tmp_path / ".staging"
    killed = staging / f"{VIDEO_ID}-deadbeef"          # a killed ingest: no owner
    (killed / "memory.lance").mkdir(parents=True)
    (killed / "source.mp4").write_bytes(b"x" * 1000)
    deleted = staging / f"deleted-{VIDEO_ID}-0badf00d"  # an interrupted delete
    deleted.mkdir()
    (deleted / "video.db").write_text("x")
    live = staging / f"{VIDEO_ID}-a11ve000"             # an ingest running in another process
    (live / "source.mp4").parent.mkdir(parents=True)
    owner = _hold_lock(staging / f"{live.name}.lock")
    try:
        assert library.clean_leftovers() == 2
        assert not killed.exists() and not deleted.exists()
        assert live.is_dir()
    finally:
        owner.kill()
        owner.wait()
    assert library.clean_leftovers() == 1
    assert list(staging.iterdir()) == []


def test_ingests_of_one_video_take_turns_across_processes(tmp_path):
    library = Library(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom backend.library import Library\n"
         f"with Library({str(tmp_path)!r}).lock({VIDEO_ID!r}):\n"
         "    print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert holder.stdout.readline().strip() == "locked"
    waited = threading.Event()

    def second():
        with library.lock(VIDEO_ID):
            waited.set()
    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.5)
    assert not waited.is_set()  # blocked while the other process holds the video's lock
    holder.kill()  # the kernel releases a dead process's lock
    holder.wait()
    thread.join(10)
    assert waited.is_set()


def test_waiters_take_turns_and_the_lock_file_goes_away(tmp_path):
    library = Library(tmp_path)
    inside, order = threading.Lock(), []

    def work(n):
        with library.lock(VIDEO_ID):
            assert inside.acquire(blocking=False), "two holders at once"
            order.append(n)
            time.sleep(0.05)
            inside.release()
    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(order) == list(range(6))
    assert not (tmp_path / ".locks").exists()  # nothing left in HOME by the lock


def test_an_ingest_killed_mid_way_is_cleaned_by_the_next_one(tmp_path):
    # kill -9 while building: the staging folder and the video's lock file stay behind, the
    # kernel drops the locks; the next caller of the same video gets the lock at once and
    # leaves HOME with the library only.
    library = Library(tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\nfrom backend.library import Library\n"
         f"library = Library({str(tmp_path)!r})\n"
         f"with library.lock({VIDEO_ID!r}), library.staging({VIDEO_ID!r}) as folder:\n"
         "    (folder / 'source.mp4').write_bytes(b'x' * 100000)\n"
         "    print('building', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert child.stdout.readline().strip() == "building"
    child.kill()
    child.wait()
    assert [p for p in (tmp_path / ".staging").iterdir() if p.is_dir()]
    started = time.monotonic()
    with library.lock(VIDEO_ID):
        assert time.monotonic() - started < 2
    assert list((tmp_path / ".staging").iterdir()) == []
    assert not (tmp_path / ".locks").exists()
    assert not library.has(VIDEO_ID)
