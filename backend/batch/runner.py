"""A batch ingest from its arguments to its summary: files found, planned, ingested, gathered."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from backend.batch import files, plan, pool
from backend.batch.plan import BatchSummary, FileOutcome
from backend.config import Settings
from backend.library import Library

log = logging.getLogger(__name__)

# progress(stage, bytes done, bytes in all, the file just finished or None): stage "hash" while
# the files are read, "ingest" while they are ingested.
Progress = Callable[[str, int, int, FileOutcome | None], None]


def ingest_all(arguments: list[str], settings: Settings, workers: int | None = None,
               ray_address: str = "", progress: Progress | None = None) -> BatchSummary:
    """Every video file the arguments name (paths, folders, globs) into the library, over
    `workers` processes (1 if None) or, with `ray_address`, as Ray tasks."""
    progress = progress or (lambda stage, done, total, outcome: None)
    started = time.perf_counter()
    found, unmatched = files.expand(arguments, settings.home)
    outcomes = {Path(a): FileOutcome(a, reason=files.why_none(a)) for a in unmatched}
    library = Library(settings.home)
    library.clean_leftovers()  # what killed runs left, before any worker starts
    planned = plan.plan(found, library, _counter("hash", found, progress))
    outcomes.update(planned.decided)
    done = _counter("ingest", planned.todo, progress)

    def finished(outcome: FileOutcome) -> None:
        outcomes[Path(outcome.path)] = outcome
        done(Path(outcome.path), outcome)

    engine = _engine(planned.todo, settings, workers, ray_address, finished)
    for copy, first in planned.copies.items():
        outcomes[copy] = plan.settle_copy(copy, outcomes[first])
    ordered = [outcomes[p] for p in [*map(Path, unmatched), *found]]
    return BatchSummary(ordered, time.perf_counter() - started, engine)


def _engine(paths: list[Path], settings: Settings, workers: int | None, ray_address: str,
            finished: Callable[[FileOutcome], None]) -> str:
    """Runs the files on Ray or the process pool; where they ran, in words."""
    if not paths:
        return "nothing to ingest"
    if ray_address:
        from backend.batch import cluster

        return cluster.run(paths, settings, ray_address, workers, finished)
    count, capped = cap_workers(min(workers or 1, len(paths)))
    if capped:
        log.warning("%s", capped)
    pool.run(paths, settings, count, finished)
    threads = pool.threads_per_worker(settings, count)
    return (f"{count} worker process{'es' if count > 1 else ''}, "
            f"{threads} thread{'s' if threads > 1 else ''} each" + (f" ({capped})" if capped else ""))


# What one ingest worker process holds at its peak (`bench ingest`: 1.7-1.8 GB RSS with every
# model loaded, of which the shared libraries and the page cache are some).
WORKER_BYTES = 1_500 * 2**20


def cap_workers(asked: int, cores: int | None = None, free_bytes: int | None = None) -> tuple[int, str]:
    """(workers to start, why fewer than asked, or ''): no more than the cores, and no more than
    the free memory holds, so `--workers 1000` cannot start processes enough to exhaust RAM."""
    cores = cores or os.cpu_count() or 1
    free_bytes = _available_memory() if free_bytes is None else free_bytes
    by_memory = max(1, free_bytes // WORKER_BYTES) if free_bytes else asked
    count = max(1, min(asked, cores, by_memory))
    if count == asked:
        return count, ""
    why = f"{cores} cores" if count == cores else \
        f"{free_bytes / 2**30:.1f} GiB of free memory at about {WORKER_BYTES / 2**30:.1f} GiB a worker"
    return count, f"capped at {count} workers of the {asked} asked: this machine has {why}"


def _available_memory() -> int:
    """Bytes of memory available for new processes (Linux' MemAvailable), 0 where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _counter(stage: str, paths: list[Path], progress: Progress):
    """A callback for each file done that reports the bytes done so far."""
    sizes = {p: _size(p) for p in paths}
    total = sum(sizes.values())
    done = 0
    progress(stage, 0, total, None)

    def count(path: Path, outcome: FileOutcome | None = None) -> None:
        nonlocal done
        done += sizes.get(path, 0)
        progress(stage, done, total, outcome)
    return count


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
