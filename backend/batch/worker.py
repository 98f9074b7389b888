"""One file's ingest in a worker process: the function the process pool and Ray tasks both call.

Its failure comes back as data (`FileOutcome.reason`), never as an exception, so that one bad
file cannot stop the others: a process boundary is an edge where errors become messages.
"""

from __future__ import annotations

import logging
import os
import resource
import socket
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from backend import config
from backend.batch.plan import FileOutcome
from backend.config import Settings
from backend.errors import MemoryReelError
from models.errors import ModelError

log = logging.getLogger(__name__)

_models = None  # this process's ModelSet: loaded by the first file, reused by the next


def ingest_file(path: str, settings: Settings) -> FileOutcome:
    """Ingest `path` into `settings.home` with this process's models."""
    started = time.perf_counter()
    try:
        result = _ingest(Path(path), settings)
    except (MemoryReelError, ModelError) as e:
        return _outcome(path, started, reason=str(e) or type(e).__name__)
    except Exception as e:  # noqa: BLE001 - a bug in one file's ingest is that file's failure
        log.exception("ingest of %s failed", path)
        return _outcome(path, started, reason=f"{type(e).__name__}: {e}")
    return _outcome(path, started, video_id=result.video_id, cached=result.cached,
                    duration=result.duration)


def _ingest(path: Path, settings: Settings):
    global _models
    if _models is None or _models.settings != settings:
        _models = _start(settings)
    from backend.ingest.pipeline import ingest

    return ingest(path, settings, models=_models)


def _start(settings: Settings):
    """This process's models, and its share of the cores: the thread variables for the
    libraries that load with the models (PyTorch, CTranslate2), and numpy's BLAS threads,
    which loaded with the library module before any variable could be set."""
    config.third_party_environment(settings)
    if settings.ingest_threads:
        threadpool_limits(settings.ingest_threads, user_api="blas")
    from backend.factory import ModelSet

    return ModelSet(settings)


def _outcome(path: str, started: float, **fields) -> FileOutcome:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return FileOutcome(path, seconds=time.perf_counter() - started,
                       worker=f"{socket.gethostname()}:{os.getpid()}", peak_rss_mb=peak, **fields)
