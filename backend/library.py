"""The video library on disk: one folder per ingested video under MEMORYREEL_HOME/videos.

A video folder appears only when its ingest has finished: ingest writes into a private
staging folder and renames it into place in one step, so a failed or interrupted ingest leaves
nothing behind and never touches another video's folder.

Leftovers and races, across processes (POSIX file locks, released by the kernel when a process
dies, so a killed ingest never leaves a lock held):

- each staging folder `.staging/<id>-<random>/` has a sibling lock file held by its ingest;
  `clean_leftovers()` removes the staging folders whose lock nobody holds (a killed ingest's)
  and every `deleted-*` folder (a deleted video whose removal was interrupted);
- `lock(video_id)` (`.locks/<id>.lock`, removed when released) makes ingests of the same file
  take turns: the second waits, then finds the video in the library and returns it as cached;
  `clean_leftovers()` also removes the lock files of killed ingests, which nobody holds.

    videos/<video_id>/source<ext>    the uploaded file, copied
    videos/<video_id>/video.db       symbolic memory (SQLite, see schema.py)
    videos/<video_id>/memory.lance/  episodic memory (LanceDB)
    videos/<video_id>/thumb.jpg      thumbnail
    videos/<video_id>/preview.mp4    H.264 copy for the browser, where the source is not playable
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import sqlite3
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import sqlite_utils

from backend.errors import NotFoundError
from backend.schema import TABLES

log = logging.getLogger(__name__)

# Animated GIF and WebP are re-timed into an MP4 at ingest (backend/ingest/animated.py).
VIDEO_EXTENSIONS = {".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".wmv",
                    ".flv", ".ts", ".3gp", ".gif", ".webp"}
_ID_LENGTH = 16
_VIDEO_ID = re.compile(r"[0-9a-f]{16}")


def check_video_id(video_id: str) -> str:
    """`video_id` if it has the form of one (16 lowercase hex digits), else a NotFoundError:
    an id is joined to paths under HOME, so `..` or a slash must never get that far."""
    if not isinstance(video_id, str) or not _VIDEO_ID.fullmatch(video_id):
        raise NotFoundError(f"'{video_id}' is not a video id: ids are 16 hex digits (0-9, a-f). "
                            "Run `python -m backend info` to list the library.")
    return video_id


@dataclass(frozen=True)
class VideoEntry:
    video_id: str
    name: str
    duration: float
    width: int
    height: int
    ingested_at: str
    folder: Path

    @property
    def db_path(self) -> Path:
        return self.folder / "video.db"

    @property
    def source(self) -> Path:
        return next(self.folder.glob("source.*"))

    @property
    def playable(self) -> Path:
        """What a browser can play: the H.264 preview where the source needed one."""
        preview = self.folder / "preview.mp4"
        return preview if preview.is_file() else self.source

    def info(self) -> dict:
        """Metadata and row counts, as `info` prints them."""
        db = sqlite_utils.Database(self.db_path)
        try:
            row = dict(next(db["video"].rows))
        finally:
            db.close()
        row["models"] = json.loads(row["models"] or "{}")
        tables = self.table_counts()
        info = {"video_id": self.video_id, **{k: v for k, v in row.items() if k != "id"},
                "tables": tables,
                "graph": {"nodes": tables["graph_nodes"], "edges": tables["graph_edges"]}}
        warnings = []
        objects = str(row["models"].get("objects", ""))
        if objects.startswith("unavailable: "):
            warnings.append(f"everyday objects were not tracked, only people and moving "
                            f"things: {objects.removeprefix('unavailable: ')}")
        if declared := row["models"].get("frames_declared"):
            fps = row["fps"] or 1.0
            warnings.append(f"the file declares {declared} frames ({declared / fps:.1f} s) but "
                            f"{row['frames']} decode ({row['frames'] / fps:.1f} s): every frame "
                            f"that decodes was kept")
        if warnings:
            info["warnings"] = warnings
        return info

    def table_counts(self) -> dict[str, int]:
        from backend.graph import build as graph_build  # NLTK: imported only when counts are asked for

        db = sqlite_utils.Database(self.db_path)
        try:
            graph_build.ensure(db)
            # A library ingested before a table existed simply has none of its rows.
            return {name: db[name].count if db[name].exists() else 0 for name in TABLES}
        finally:
            db.close()

    def counts(self) -> dict[str, int]:
        """Rows per table and episodic segments, as an ingest reports them."""
        from backend import episodic  # LanceDB: imported only when counts are asked for

        return {**self.table_counts(),
                "episodic": sum(episodic.count_by_scale(self.folder).values())}


def disk_full(error: BaseException) -> bool:
    """Whether `error` is a write that found the disk (or the user's quota) full, as each writer
    says it: an OSError's errno (copies, images, video), SQLite's SQLITE_FULL, and LanceDB's
    RuntimeError, which carries only the operating system's text."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if isinstance(error, sqlite3.Error):
        return getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
    text = str(error)
    return os.strerror(errno.ENOSPC) in text or os.strerror(errno.EDQUOT) in text


def content_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def video_id_for(sha256: str) -> str:
    return sha256[:_ID_LENGTH]


class Library:
    def __init__(self, home: Path):
        self.home = Path(home)
        self.videos_dir = self.home / "videos"
        self._staging_dir = self.home / ".staging"
        self._locks_dir = self.home / ".locks"

    def folder(self, video_id: str) -> Path:
        return self.videos_dir / check_video_id(video_id)

    def has(self, video_id: str) -> bool:
        if not isinstance(video_id, str) or not _VIDEO_ID.fullmatch(video_id):
            return False
        return (self.folder(video_id) / "video.db").is_file()

    def get(self, video_id: str) -> VideoEntry:
        if not self.has(check_video_id(video_id)):
            raise NotFoundError(f"No video with id '{video_id}' in the library at {self.home}. "
                                "Run `python -m backend info` to list the library.")
        try:
            return self._entry(self.folder(video_id))
        except _UNREADABLE as e:
            raise NotFoundError(f"Video {video_id} is damaged ({_why(e)}): ingest its file "
                                "again to repair it.") from None

    def list(self) -> list[VideoEntry]:
        """The videos whose database opens; a damaged one is left out (see `damaged`), so one
        bad file never hides the rest of the library."""
        entries = []
        for folder in self._folders():
            try:
                entries.append(self._entry(folder))
            except _UNREADABLE as e:
                log.warning("video %s is damaged and left out: %s", folder.name, _why(e))
        return sorted(entries, key=lambda e: e.ingested_at)

    def damaged(self) -> list[dict]:
        """{video_id, reason} for each video whose database does not open."""
        return [{"video_id": f.name, "reason": why} for f in self._folders()
                if (why := self.damage(f.name))]

    def damage(self, video_id: str) -> str | None:
        """Why the video's database does not open or read, or None where it does."""
        try:
            self._entry(self.folder(video_id))
        except _UNREADABLE as e:
            return _why(e)
        return None

    def whole(self, video_id: str) -> VideoEntry | None:
        """The video, where it is in the library and its database reads; None otherwise (absent,
        or damaged and to be built again)."""
        if not self.has(video_id):
            return None
        try:
            return self._entry(self.folder(video_id))
        except _UNREADABLE:
            return None

    def _folders(self) -> list[Path]:
        if not self.videos_dir.is_dir():
            return []
        return [f for f in self.videos_dir.iterdir()
                if _VIDEO_ID.fullmatch(f.name) and (f / "video.db").is_file()]

    def delete(self, video_id: str) -> None:
        self._discard(self.get(video_id).folder)

    def _discard(self, folder: Path) -> None:
        # Rename first so a half-deleted folder is never mistaken for a video; a removal cut
        # short leaves a `deleted-*` folder that clean_leftovers() finishes.
        trash = self._staging_dir / f"deleted-{folder.name}-{uuid.uuid4().hex[:8]}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        folder.rename(trash)
        shutil.rmtree(trash, ignore_errors=True)

    @contextmanager
    def lock(self, video_id: str) -> Iterator[None]:
        """Held while one caller ingests `video_id`; others wait here (threads and processes).

        On release it also clears leftovers, so every ingest, failed or not, ends with none;
        the lock file and its folder are removed too, so a refused file changes nothing."""
        path = self._locks_dir / f"{check_video_id(video_id)}.lock"
        held = _acquire(path)
        try:
            yield
        finally:
            self.clean_leftovers()
            _release(held, path)

    @contextmanager
    def staging(self, video_id: str) -> Iterator[Path]:
        """A private folder to build a video in; moved into the library only if the block succeeds."""
        self._staging_dir.mkdir(parents=True, exist_ok=True)
        self.videos_dir.mkdir(parents=True, exist_ok=True)
        folder = self._staging_dir / f"{check_video_id(video_id)}-{uuid.uuid4().hex[:8]}"
        # The lock file exists and is held before the folder does, so clean_leftovers() never
        # sees this folder without a live owner.
        with open(_owner_file(folder), "a+b") as owner:
            fcntl.flock(owner, fcntl.LOCK_EX)
            try:
                folder.mkdir()
                yield folder
                self._move_into_place(folder, video_id)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
                _unlink(_owner_file(folder))

    def add_copy(self, video_id: str, built: Path) -> None:
        """A video folder finished in another library (a Ray task's, on its node's own disk),
        copied in through a staging folder, so it appears whole or not at all."""
        with self.staging(video_id) as folder:
            shutil.copytree(built, folder, dirs_exist_ok=True)

    def _move_into_place(self, folder: Path, video_id: str) -> None:
        # Ingested meanwhile by a caller that did not take lock(): that one stands, if whole.
        if self.whole(video_id) is not None:
            return
        target = self.folder(video_id)
        if target.exists():  # no video.db, or one that does not open: not a video, set aside
            log.warning("replacing incomplete or damaged video folder %s", target)
            self._discard(target)
        folder.rename(target)

    def clean_leftovers(self) -> int:
        """Remove staging folders no live process owns and interrupted deletions (returns how
        many), and lock files no ingest holds."""
        self._remove_unheld_locks()
        if not self._staging_dir.is_dir():
            return 0
        removed = 0
        for path in sorted(self._staging_dir.iterdir()):
            if path.name.startswith("deleted-") and path.is_dir():
                shutil.rmtree(path, ignore_errors=True)  # garbage whoever started removing it
                removed += 1
            elif path.is_dir() and _remove_if_unowned(path):
                removed += 1
            elif path.suffix == ".lock" and not path.with_suffix("").exists():
                _remove_if_unowned(path.with_suffix(""))  # an owner file left without its folder
        if removed:
            log.info("removed %d leftover folder(s) from %s", removed, self._staging_dir)
        return removed

    def _remove_unheld_locks(self) -> None:
        """Per-video lock files that killed ingests left, removed as `_release` would remove
        them (while locked, so a waiter sees its file is stale); a held one stays."""
        for path in self._locks_dir.glob("*.lock"):
            try:
                fd = os.open(path, os.O_RDWR)  # never O_CREAT: a lock released meanwhile is gone
            except FileNotFoundError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if os.stat(path).st_ino == os.fstat(fd).st_ino:
                    path.unlink()
            except (BlockingIOError, FileNotFoundError):
                pass  # held by an ingest (this process's own included), or just released
            finally:
                os.close(fd)
        with contextlib.suppress(OSError):
            self._locks_dir.rmdir()  # only if empty

    @staticmethod
    def _entry(folder: Path) -> VideoEntry:
        db = sqlite_utils.Database(folder / "video.db")
        try:
            row = next(db["video"].rows)
        finally:
            db.close()
        return VideoEntry(video_id=row["id"], name=row["name"], duration=row["duration"],
                          width=row["width"], height=row["height"],
                          ingested_at=row["ingested_at"], folder=folder)


# What reading a video's own row raises when its database is damaged or was overwritten.
_UNREADABLE = (sqlite3.Error, sqlite_utils.db.NotFoundError, StopIteration, KeyError, TypeError)


def _why(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _acquire(path: Path):
    """An open file holding an exclusive flock on `path`, the file that is at `path` now."""
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            held = open(path, "a+b")
        except FileNotFoundError:
            continue  # the folder was removed between mkdir and open: make it again
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            current = os.stat(path).st_ino == os.fstat(held.fileno()).st_ino
        except FileNotFoundError:
            current = False
        if current:
            return held
        held.close()  # the holder removed this file on release: lock the one now at `path`


def _release(held, path: Path) -> None:
    # Removed while still locked, so a waiter that gets this file next sees it is stale.
    _unlink(path)
    with contextlib.suppress(OSError):
        path.parent.rmdir()  # only if empty: another video's lock may be there
    held.close()


def _owner_file(folder: Path) -> Path:
    return folder.with_name(folder.name + ".lock")


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _remove_if_unowned(folder: Path) -> bool:
    """Remove a staging folder (and its owner file) unless a live process holds the owner lock."""
    try:
        owner = open(_owner_file(folder), "a+b")
    except OSError:
        return False
    with owner:
        try:
            fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # an ingest is building it right now
        existed = folder.exists()
        shutil.rmtree(folder, ignore_errors=True)
        _unlink(_owner_file(folder))
        return existed
