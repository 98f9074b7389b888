"""The video files a batch ingest is given: paths, folders (searched recursively) and globs."""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path

from backend.library import VIDEO_EXTENSIONS


def expand(arguments: list[str], home: Path) -> tuple[list[Path], list[str]]:
    """(the video files, in order and each once; the arguments that named none).

    A file given by name is kept whatever its type, so that ingest can say why it refuses it; a
    folder or a glob gives only the files with a video extension, and never the library's own
    copies (a folder holding MEMORYREEL_HOME would otherwise offer every source again)."""
    found: dict[Path, Path] = {}  # each file once, by where it really is
    unmatched = []
    library = Path(home).resolve()
    for argument in arguments:
        files = _one(argument)
        files = [f for f in files if library not in f.resolve().parents]
        if not files:
            unmatched.append(argument)
        for f in files:
            found.setdefault(f.resolve(), f.absolute())
    return list(found.values()), unmatched


def is_batch(arguments: list[str]) -> bool:
    """Whether these arguments ask for more than the one file `ingest PATH` has always taken."""
    return len(arguments) != 1 or Path(arguments[0]).is_dir() or (
        not Path(arguments[0]).exists() and _is_glob(arguments[0]))


def _one(argument: str) -> list[Path]:
    path = Path(argument)
    if path.is_file():
        return [path]
    if path.is_dir():
        return _videos(_walk(path))
    if _is_glob(argument):
        parts = path.parts
        fixed = next((i for i, part in enumerate(parts) if _is_glob(part)), len(parts))
        root = Path(*parts[:fixed]) if fixed else Path(".")
        matches = [p for p in [root, *_walk(root, dirs=True)]
                   if _matches(p.relative_to(root).parts, parts[fixed:])]
        return _videos([f for m in matches for f in ([m] if m.is_file() else _walk(m))])
    return []


def _walk(folder: Path, dirs: bool = False) -> list[Path]:
    """Everything below `folder`, never through a linked folder: a link to `.` or `..` would
    list the tree again and again (os.walk, unlike glob and rglob, does not follow them)."""
    found = []
    for top, folders, files in os.walk(folder, followlinks=False):
        found += [Path(top) / name for name in files]
        if dirs:
            found += [Path(top) / name for name in folders
                      if not (Path(top) / name).is_symlink()]
    return found


def _matches(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Whether a relative path matches glob parts, '**' standing for any number of folders; as
    with glob, a wildcard never matches a hidden name."""
    if not pattern:
        return not parts
    hidden = bool(parts) and parts[0].startswith(".")
    if pattern[0] == "**":
        return _matches(parts, pattern[1:]) or (bool(parts) and not hidden
                                                 and _matches(parts[1:], pattern))
    return bool(parts) and (not hidden or pattern[0].startswith(".")) and \
        fnmatchcase(parts[0], pattern[0]) and _matches(parts[1:], pattern[1:])


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
    # A link to a video that is gone is kept, so that the summary names it rather than skip it.
    return sorted(p for p in paths if (p.is_file() or dangling(p))
                  and p.suffix.lower() in VIDEO_EXTENSIONS and not p.name.startswith("."))


def dangling(path: Path) -> bool:
    return path.is_symlink() and not path.exists()
