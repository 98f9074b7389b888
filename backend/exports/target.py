"""Where an export lands: a regular file, replaced in one step.

Written in place, an export wrote into whatever file the name led to: through a hard link to a
video's `video.db` it overwrote the database. A new file renamed over the name leaves every other
name of the old file as it was, and a write that fails leaves nothing half-written. Names that
cannot hold an export (a folder, a device such as /dev/full, a path through a file) are refused
before anything is written, with what is wrong.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from backend.errors import ExportError


def check(out: Path) -> None:
    if out.is_dir():
        raise ExportError(f"--out {out} is a folder: give a file name in it.")
    if out.exists() and not out.is_file():
        raise ExportError(f"--out {out} is not a regular file (a device or a pipe): give a file "
                          f"name, or leave out --out to write to stdout.")
    above = next(p for p in out.absolute().parents if p.exists())
    if not above.is_dir():
        raise ExportError(f"--out {out} goes through '{above}', which is a file, not a folder.")


def write(out: Path, data: bytes) -> None:
    """`data` into a new file beside `out`, renamed to `out` once whole."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    except OSError as e:
        raise ExportError(f"--out {out} cannot be created ({e.strerror or e}).") from None
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, out)
    except OSError as e:
        Path(temporary).unlink(missing_ok=True)
        raise ExportError(f"--out {out} could not be written ({e.strerror or e}).") from None
