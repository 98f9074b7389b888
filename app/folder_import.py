"""The server's import folder (MEMORYREEL_IMPORT_DIR): what it holds, and all of it ingested.

The folder comes from the setting alone; no request names a path, so a visitor can import only
what the operator put there. The page's events sit behind the app's login wherever it asks for
one (Gradio checks it before any event runs). Files are listed and ingested by the batch
ingest's own rules (backend/batch), so the list shown is what an import takes, and every file
is named relative to the folder: where the folder is on the server is no visitor's business.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.errors import without_server_paths
from backend.batch import files
from backend.batch.plan import BatchSummary, FileOutcome
from backend.batch.runner import ingest_all
from backend.config import Settings
from backend.errors import InputError

# One worker process: the server's answers share these cores, and each worker holds models of
# its own (1.5-1.8 GB measured). Bigger imports belong on `ingest --workers N` or on the Ray
# cluster of MEMORYREEL_RAY_ADDRESS, which an import here uses when it is set.
WORKERS = 1
LISTED = 50  # file names shown; a larger folder shows the first ones and the count

# report(fraction done or None, what happened last)
Report = Callable[[float | None, str], None]


def folder(settings: Settings) -> Path:
    """The import folder, or an InputError saying why there is none to import from."""
    if not settings.import_dir:
        raise InputError("Importing from a server folder is off: the server's operator turns "
                         "it on by setting MEMORYREEL_IMPORT_DIR to a folder of videos.")
    path = Path(settings.import_dir)
    if not path.is_dir():
        raise InputError(f"The import folder '{path.name}' is not there on the server "
                         "(MEMORYREEL_IMPORT_DIR).")
    return path


def listing(settings: Settings) -> str:
    """The folder's video files, as the import would take them; '' with the import off."""
    if not settings.import_dir:
        return ""
    try:
        found = _videos(folder(settings), settings)
    except InputError as e:
        return str(e)
    if not found:
        return "The server folder holds no video files."
    names = [f"`{_relative(p, settings)}`" for p in found[:LISTED]]
    more = f" and {len(found) - LISTED} more" if len(found) > LISTED else ""
    gigabytes = sum(_size(p) for p in found) / 1e9
    return (f"{len(found)} video file{'s' if len(found) > 1 else ''} ({gigabytes:.2f} GB): "
            f"{', '.join(names)}{more}.")


def import_all(settings: Settings, report: Report) -> BatchSummary:
    """Every video in the import folder into the library; `report` after each file read and
    each file ingested, naming the file and what became of it."""
    source = folder(settings)
    if not _videos(source, settings):
        raise InputError("The server folder holds no video files.")
    finished: list[FileOutcome] = []

    def progress(stage: str, done: int, total: int, outcome: FileOutcome | None) -> None:
        fraction = done / total if total else None
        if stage == "hash":
            report(fraction, "Reading the files to find what the library holds already")
            return
        if outcome is None:
            report(fraction, "Ingesting")
            return
        finished.append(outcome)
        report(fraction, f"{len(finished)} done: {_relative(Path(outcome.path), settings)} "
                         f"{outcome.state}")

    return ingest_all([str(source)], settings, workers=WORKERS,
                      ray_address=settings.ray_address, progress=progress)


def describe(summary: BatchSummary, settings: Settings) -> str:
    """The summary as Markdown: counts, then the files of each kind, failures with reasons."""
    ingested, cached, failed = (summary.of(k) for k in ("ingested", "cached", "failed"))
    lines = [f"{'✓' if not failed else '⚠'} Imported from the server folder in "
             f"{summary.seconds:.0f} s: **{len(ingested)} ingested**, {len(cached)} already in "
             f"the library, **{len(failed)} failed**."]
    for label, outcomes in (("Ingested", ingested), ("Already in the library", cached)):
        if outcomes:
            lines.append(f"- {label}: " + ", ".join(f"`{_relative(Path(o.path), settings)}`"
                                                    for o in outcomes))
    lines += [f"- Failed: `{_relative(Path(o.path), settings)}`: {_reason(o, settings)}"
              for o in failed]
    return "\n".join(lines)


def _videos(source: Path, settings: Settings) -> list[Path]:
    found, _ = files.expand([str(source)], settings.home)
    return found


def _relative(path: Path, settings: Settings) -> str:
    try:
        return str(path.relative_to(Path(settings.import_dir).absolute()))
    except ValueError:
        return path.name


def _reason(outcome: FileOutcome, settings: Settings) -> str:
    inside = f"{Path(settings.import_dir).absolute()}/"
    return without_server_paths(outcome.reason.replace(inside, ""))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
