"""The video files a batch ingest is given: paths, folders (searched recursively) and globs."""

from __future__ import annotations

import glob
from pathlib import Path

from backend.library import VIDEO_EXTENSIONS


def expand(arguments: list[str], home: Path) -> tuple[list[Path], list[str]]:
    """(the video files, in order and each once; the arguments that named none).

    A file given by name is kept whatever its type, so that ingest can say why it refuses it; a
    folder or a glob gives only the files with a video extension, and never the library's own
    copies (a folder holding MEMORYREEL_HOME would otherwise offer every source again)."""
    found: dict[Path, None] = {}
    unmatched = []
    library = Path(home).resolve()
    for argument in arguments:
        files = _one(argument)
        files = [f for f in files if library not in f.resolve().parents]
        if not files:
            unmatched.append(argument)
        found.update(dict.fromkeys(f.absolute() for f in files))
    return list(found), unmatched


def is_batch(arguments: list[str]) -> bool:
    """Whether these arguments ask for more than the one file `ingest PATH` has always taken."""
    return len(arguments) != 1 or Path(arguments[0]).is_dir() or (
        not Path(arguments[0]).exists() and _is_glob(arguments[0]))


def _one(argument: str) -> list[Path]:
    path = Path(argument)
    if path.is_file():
        return [path]
    if path.is_dir():
        return _videos(path.rglob("*"))
    if _is_glob(argument):
        matches = [Path(m) for m in glob.glob(argument, recursive=True)]
        return _videos([f for m in matches for f in ([m] if m.is_file() else m.rglob("*"))])
    return []


def why_none(argument: str) -> str:
    """Why an argument gave no files, for the batch's list of failures."""
    if Path(argument).is_dir():
        return f"'{argument}' holds no video files ({', '.join(sorted(VIDEO_EXTENSIONS))})."
    if _is_glob(argument):
        return f"'{argument}' matches no video file."
    return f"'{argument}' does not exist."


def _is_glob(argument: str) -> bool:
    return any(c in argument for c in "*?[")


def _videos(paths) -> list[Path]:
    # Hidden files are not footage: macOS leaves a `._NAME.mp4` of metadata beside each video.
    return sorted(p for p in paths if p.is_file() and p.suffix.lower() in VIDEO_EXTENSIONS
                  and not p.name.startswith("."))
