"""What a batch has to do, decided by the one process that owns the run, before any worker starts.

Every file is hashed here: a video the library holds already is reported cached, and of files
with the same content only the first is sent to a worker, so each video folder has exactly one
writer even where file locks do not reach across machines (a Ray cluster's shared disk).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from backend.batch.files import dangling
from backend.library import Library, content_hash, video_id_for


@dataclass(frozen=True)
class FileOutcome:
    """What became of one file: ingested, cached (`cached`), or failed (`reason` says why)."""

    path: str
    video_id: str = ""
    cached: bool = False
    reason: str = ""
    seconds: float = 0.0      # its ingest, from start to end
    duration: float = 0.0     # the video's own length
    worker: str = ""          # host:pid of the process that ingested it
    peak_rss_mb: float = 0.0  # that process's peak resident memory up to then

    @property
    def failed(self) -> bool:
        return bool(self.reason)

    @property
    def state(self) -> str:
        return "failed" if self.failed else "cached" if self.cached else "ingested"


@dataclass(frozen=True)
class BatchSummary:
    outcomes: list[FileOutcome]
    seconds: float
    engine: str  # where the videos were ingested, in words

    def of(self, kind: str) -> list[FileOutcome]:
        """The outcomes that are `ingested`, `cached` or `failed`, in the order of the files."""
        return [o for o in self.outcomes if o.state == kind]

    def as_dict(self) -> dict:
        return {"ingested": [{"path": o.path, "video_id": o.video_id, "seconds": round(o.seconds, 2),
                              "duration": round(o.duration, 2), "worker": o.worker,
                              "peak_rss_mb": round(o.peak_rss_mb, 1)} for o in self.of("ingested")],
                "cached": [{"path": o.path, "video_id": o.video_id} for o in self.of("cached")],
                "failed": [{"path": o.path, "reason": o.reason} for o in self.of("failed")],
                "seconds": round(self.seconds, 2), "engine": self.engine}


@dataclass
class Plan:
    todo: list[Path] = field(default_factory=list)  # one file per content the library lacks
    decided: dict[Path, FileOutcome] = field(default_factory=dict)  # cached, unreadable
    copies: dict[Path, Path] = field(default_factory=dict)  # a later copy -> the file sent for it


def plan(files: list[Path], library: Library, hashed: Callable[[Path], None]) -> Plan:
    """Sort `files` into those to ingest, those decided already, and second copies;
    `hashed(path)` after each file is read."""
    result = Plan()
    first: dict[str, Path] = {}
    for path in files:
        if dangling(path):
            result.decided[path] = FileOutcome(str(path), reason=f"'{path}' is a link to "
                                               f"'{os.readlink(path)}', which does not exist.")
            hashed(path)
            continue
        try:
            video_id = video_id_for(content_hash(path))
        except OSError as e:
            result.decided[path] = FileOutcome(str(path), reason=f"'{path}' cannot be read "
                                                                 f"({e.strerror or e}).")
            continue
        finally:
            hashed(path)
        if library.has(video_id):
            result.decided[path] = FileOutcome(str(path), video_id=video_id, cached=True)
        elif video_id in first:
            result.copies[path] = first[video_id]
        else:
            first[video_id] = path
            result.todo.append(path)
    return result


def settle_copy(path: Path, first: FileOutcome) -> FileOutcome:
    """A second copy of a file ends as the first did: cached if that one was ingested."""
    if first.failed:
        return FileOutcome(str(path), reason=f"same content as '{first.path}', which failed: "
                                             f"{first.reason}")
    return FileOutcome(str(path), video_id=first.video_id, cached=True)
