"""The scenes with person truth that every people measurement runs over, and their halves.

Scenes, not videos, are the unit of independence: a footage variant (`footage.py`) shows the
same people doing the same things, so it is right or wrong with its scene. Each scene is in one
half, tuning or reporting, with all its variants; each half holds a TUD sequence, a crowd and a
moving camera, so neither is tuned on a kind of scene the other lacks. A scene not listed here
(a folder of one's own) takes the halves in turn, in name order.
"""

from __future__ import annotations

from pathlib import Path

from backend.evaluation.tracking import Sequence, find_sequences

# Folders below ../shared/videos, each of MOT-layout sequences; the tests walk the first only.
TRUTH_FOLDERS = ("ground-truth", "ground-truth-wide")
HALVES = ("tune", "report")
# Few people (up to 15 at once) in two tuning scenes, as high needs a condition measured on at
# least two scenes (`precision.MIN_SCENES`); crowds and moving cameras in both halves.
HALF = {
    "TUD-Stadtmitte": "tune", "MOT16-09": "tune", "MOT16-04-every5": "tune",
    "MOT16-10-every5": "tune",
    "TUD-Campus": "report", "MOT16-02": "report", "MOT16-13-every5": "report", "Mall": "report",
}


def every_scene(videos: Path) -> list[Sequence]:
    """Every sequence in the truth folders under `videos` (../shared/videos) that exist."""
    return [s for folder in TRUTH_FOLDERS if (Path(videos) / folder).is_dir()
            for s in find_sequences(Path(videos) / folder)]


def halves(sequences: list[Sequence]) -> dict[str, str]:
    """{sequence name: half} for these scenes."""
    unknown = sorted(s.name for s in sequences if s.name not in HALF)
    return {s.name: HALF.get(s.name) or HALVES[unknown.index(s.name) % 2] for s in sequences}
