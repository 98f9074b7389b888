"""Worker processes on this machine, one video each at a time.

Spawned, not forked: a fork would copy whatever threads and model state the parent holds.
The cores are shared out: each worker's models get cores // N threads (unless
MEMORYREEL_INGEST_THREADS says otherwise), so N workers do not fight over the same cores.
No more files are handed out than there are workers, so when a worker dies (killed, out of
memory, a crash in native code) the files it may have held are known: those are reported
failed, and a fresh pool takes the rest.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path

from backend.batch.plan import FileOutcome
from backend.batch.worker import ingest_file
from backend.config import Settings

_DIED = ("its worker process died while it was being ingested (killed, out of memory, or a "
         "crash in native code); run the batch again to retry it")


def threads_per_worker(settings: Settings, workers: int) -> int:
    return settings.ingest_threads or max(1, (os.cpu_count() or 1) // workers)


def run(paths: list[Path], settings: Settings, workers: int,
        finished: Callable[[FileOutcome], None]) -> None:
    """Ingest `paths` over `workers` processes; `finished(outcome)` as each file ends."""
    settings = replace(settings, ingest_threads=threads_per_worker(settings, workers))
    waiting = deque(str(p) for p in paths)
    while waiting:
        _until_done_or_broken(waiting, settings, workers, finished)


def _until_done_or_broken(waiting: deque[str], settings: Settings, workers: int,
                          finished: Callable[[FileOutcome], None]) -> None:
    running: dict[Future, str] = {}
    broken = False
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        while running or (waiting and not broken):
            while waiting and not broken and len(running) < workers:
                path = waiting.popleft()
                running[pool.submit(ingest_file, path, settings)] = path
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                path = running.pop(future)
                try:
                    finished(future.result())
                except BrokenProcessPool:  # every file still running ends here too
                    broken = True
                    finished(FileOutcome(path, reason=_DIED))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
