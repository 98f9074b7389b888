"""Each video's ingest as a task on a Ray cluster (`ingest FOLDER --ray ADDRESS`).

Ray is imported here only, and only when a run asks for it. A task runs the same function as
a pool worker (`worker.ingest_file`), in a library of its own on its node's disk: SQLite and
LanceDB write there at local-disk speed and with working locks, and nothing in it is shared.
The finished video folder is then copied into the library (MEMORYREEL_HOME, a path every node
sees the same shared folder at) through a staging folder, so it appears whole or not at all.
Which files to ingest was decided by the driver (plan.py), and the library's leftovers are
cleaned by the driver alone, so no two processes write one thing in the shared library.

Every node needs this repository, its environment and `python -m backend setup`'s model files
at the same paths (one image); the model files are assembled once per node, under a lock,
by the first task that needs them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from backend.batch.plan import FileOutcome
from backend.batch.worker import ingest_file
from backend.config import Settings
from backend.errors import UsageError
from backend.library import Library


def run(paths: list[Path], settings: Settings, address: str, workers: int | None,
        finished: Callable[[FileOutcome], None]) -> str:
    """Ingest `paths` as Ray tasks; `finished(outcome)` as each ends. Joins the Ray instance
    this process has already started, if any (tests do); else connects to `address`, where
    `local` starts one for the run with `workers` tasks at a time (all cores if None).
    Returns the cluster in words."""
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs the ray package: pip install -r requirements.txt") from None
    started_here = not ray.is_initialized()
    if started_here:
        local = {"num_cpus": workers * settings.ray_cpus if workers else None,
                 "include_dashboard": False} if address == "local" else {}
        try:
            ray.init(address=address or None, **local)
        except ConnectionError as e:
            raise UsageError(f"No Ray cluster at {address!r} (--ray, MEMORYREEL_RAY_ADDRESS): "
                             f"{e}") from None
    try:
        _gather(ray, paths, settings, finished)
        return f"Ray ({ray.cluster_resources().get('CPU', 0):g} CPUs, {settings.ray_cpus} a task)"
    finally:
        if started_here:
            ray.shutdown()


def _gather(ray, paths: list[Path], settings: Settings,
            finished: Callable[[FileOutcome], None]) -> None:
    # Absolute, so a task on another node finds the same shared folders.
    settings = replace(settings, home=settings.home.absolute(),
                       ingest_threads=settings.ingest_threads or settings.ray_cpus)
    # One retry: a node lost mid-task is worth another try; a file that crashes its worker
    # would crash the next one too.
    task = ray.remote(num_cpus=settings.ray_cpus, max_retries=1)(_task)
    pending = {task.remote(str(path.absolute()), settings): path for path in paths}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        path = pending.pop(done[0])
        try:
            finished(ray.get(done[0]))
        except ray.exceptions.RayError as e:
            finished(FileOutcome(str(path), reason=f"its Ray task failed: {e}"))


def _task(path: str, settings: Settings) -> FileOutcome:
    with tempfile.TemporaryDirectory(prefix="memoryreel-task-") as own:
        outcome = ingest_file(path, replace(settings, home=Path(own)))
        if outcome.failed or outcome.cached:
            return outcome
        try:
            Library(settings.home).add_copy(outcome.video_id,
                                            Path(own) / "videos" / outcome.video_id)
        except OSError as e:
            return replace(outcome, reason=f"ingested, but not copied into the library at "
                                           f"{settings.home}: {e}")
    return outcome
