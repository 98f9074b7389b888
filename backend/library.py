"""The video library on disk: one folder per ingested video under MEMORYREEL_HOME/videos.

A video folder appears only when its ingest has finished: ingest writes into a private
staging folder and renames it into place in one step, so a failed or interrupted ingest leaves
nothing behind and never touches another video's folder.

    videos/<video_id>/source<ext>    the uploaded file, copied
    videos/<video_id>/video.db       symbolic memory (SQLite, see schema.py)
    videos/<video_id>/memory.lance/  episodic memory (LanceDB)
    videos/<video_id>/thumb.jpg      thumbnail
    videos/<video_id>/preview.mp4    H.264 copy for the browser, where the source is not playable
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import sqlite_utils

from backend.errors import NotFoundError
from backend.schema import TABLES

VIDEO_EXTENSIONS = {".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".wmv",
                    ".flv", ".ts", ".3gp"}
_ID_LENGTH = 16


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
        return {"video_id": self.video_id, **{k: v for k, v in row.items() if k != "id"},
                "tables": self.table_counts()}

    def table_counts(self) -> dict[str, int]:
        db = sqlite_utils.Database(self.db_path)
        try:
            return {name: db[name].count for name in TABLES}
        finally:
            db.close()


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

    def folder(self, video_id: str) -> Path:
        return self.videos_dir / video_id

    def has(self, video_id: str) -> bool:
        return (self.folder(video_id) / "video.db").is_file()

    def get(self, video_id: str) -> VideoEntry:
        if not video_id or "/" in video_id or not self.has(video_id):
            raise NotFoundError(f"No video with id '{video_id}' in the library at {self.home}. "
                                "Run `python -m backend info` to list the library.")
        return self._entry(self.folder(video_id))

    def list(self) -> list[VideoEntry]:
        if not self.videos_dir.is_dir():
            return []
        entries = [self._entry(f) for f in self.videos_dir.iterdir() if (f / "video.db").is_file()]
        return sorted(entries, key=lambda e: e.ingested_at)

    def delete(self, video_id: str) -> None:
        folder = self.get(video_id).folder
        # Rename first so a half-deleted folder is never mistaken for a video.
        trash = self._staging_dir / f"deleted-{video_id}-{uuid.uuid4().hex[:8]}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        folder.rename(trash)
        shutil.rmtree(trash, ignore_errors=True)

    @contextmanager
    def staging(self, video_id: str) -> Iterator[Path]:
        """A private folder to build a video in; moved into the library only if the block succeeds."""
        self._staging_dir.mkdir(parents=True, exist_ok=True)
        self.videos_dir.mkdir(parents=True, exist_ok=True)
        folder = self._staging_dir / f"{video_id}-{uuid.uuid4().hex[:8]}"
        folder.mkdir()
        try:
            yield folder
            if not self.has(video_id):  # a parallel ingest of the same file may have won
                folder.rename(self.folder(video_id))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

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
