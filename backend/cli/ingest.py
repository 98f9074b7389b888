"""The `ingest` command of the command line: one video, as it always was, or many at once
(folders, globs, several paths, `--workers N`, `--ray ADDRESS`; see backend/batch).

Kept apart from backend/cli/__init__.py, which parses arguments and reports failures for every command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from backend.cli.interrupt import check as stop_if_interrupted
from backend.errors import UsageError


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ingest", parents=[common],
                       help="add a video to the library, or every video under folders or globs")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a video file; or folders (searched recursively), globs, several paths")
    p.add_argument("--workers", type=_workers, help="videos ingested at once, each in its own "
                                                    "process (default 1); each gets cores // N "
                                                    "threads")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run each video as a task on this Ray cluster: ray://HOST:10001, auto, "
                        "or local (default MEMORYREEL_RAY_ADDRESS)")
    p.set_defaults(run=ingest_command, render=print_ingest, status=ingest_status)


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {n}")
    return n


def ingest_command(args, settings) -> dict:
    from backend.batch.files import is_batch

    ray_address = args.ray or settings.ray_address
    if args.workers or args.ray or is_batch(args.paths):
        return _ingest_batch(args, settings, ray_address)
    return _ingest_one(args, settings)


def _ingest_one(args, settings) -> dict:
    from backend.ingest.pipeline import ingest

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        stop_if_interrupted()
        if args.json or args.quiet:
            return
        bar = bars.get(stage)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = bars[stage] = tqdm(total=total or None, desc=stage, unit="step", file=sys.stderr,
                                     leave=False)
        bar.total = total or bar.total
        bar.n = done
        bar.refresh()

    try:
        result = ingest(Path(args.paths[0]), settings, progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    return result.as_dict()


def _ingest_batch(args, settings, ray_address: str) -> dict:
    from backend.batch.runner import ingest_all

    if args.workers and ray_address and ray_address != "local":
        raise UsageError("--workers sets how many videos run at once on this machine (or on "
                         "--ray local); a Ray cluster runs as many as it has CPUs for.")
    bar: tqdm | None = None
    counts = {"ingested": 0, "cached": 0, "failed": 0}

    def progress(stage: str, done: int, total: int, outcome) -> None:
        nonlocal bar
        stop_if_interrupted()
        if args.json or args.quiet:
            return
        if bar is None or bar.desc != stage:
            if bar is not None:
                bar.close()
            bar = tqdm(total=total, desc=stage, unit="B", unit_scale=True, file=sys.stderr,
                       leave=stage == "ingest")
        if outcome is not None:
            counts[outcome.state] += 1
            bar.set_postfix(counts, refresh=False)
        bar.update(done - bar.n)

    try:
        summary = ingest_all(args.paths, settings, workers=args.workers, ray_address=ray_address,
                             progress=progress)
    finally:
        if bar is not None:
            bar.close()
    return summary.as_dict()


def ingest_status(payload: dict) -> int:
    """1 for a batch in which every file failed (it printed its summary, and exited 0 before)."""
    failed_all = payload.get("failed") and not (payload["ingested"] or payload["cached"])
    return 1 if failed_all else 0


def print_ingest(payload: dict) -> None:
    """One video's rows and stage seconds; a batch's files, each with what became of it."""
    if "failed" in payload:
        _print_batch(payload)
        return
    state = "already in the library" if payload["cached"] else "ingested"
    print(f"{payload['name']}: {state} as {payload['video_id']}")
    print("  rows: " + ", ".join(f"{k} {v}" for k, v in payload["counts"].items()))
    print("  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in payload["seconds"].items()))


def _print_batch(payload: dict) -> None:
    for f in payload["ingested"]:
        print(f"ingested  {f['video_id']}  {f['seconds']:7.1f} s  {f['path']}")
    for f in payload["cached"]:
        print(f"cached    {f['video_id']}  {'':9}  {f['path']}")
    for f in payload["failed"]:
        print(f"failed    {f['path']}: {f['reason']}")
    print(f"{len(payload['ingested'])} ingested, {len(payload['cached'])} already in the "
          f"library, {len(payload['failed'])} failed, in {payload['seconds']:.1f} s "
          f"({payload['engine']})")
