"""Plain records that cross the boundary between models/ and backend/."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Pose:
    """What body keypoints say about a single person in a frame; None where they could not tell."""

    posture: str | None = None  # standing, sitting, bending or lying
    arm_raised: bool | None = None
    facing: str | None = None  # camera, away or side
    # The 17 COCO keypoints as (x, y, confidence) in source pixels: actions are read from how
    # they move over time and where the hands are (backend/ingest/actions.py).
    # float32 (17, 3): a long video holds these for every person on every sampled frame.
    keypoints: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Detection:
    """One tracked box in one frame; box is (x1, y1, x2, y2) in source-frame pixels. `colour`
    (RGB) is measured over the object's own pixels where the detector knows them, which a box
    does not: a loose box around a car holds as much asphalt as paint."""

    track_id: int
    category: str
    box: tuple[float, float, float, float]
    confidence: float
    pose: Pose | None = None  # only on the frames the pose model was run on
    colour: tuple[float, float, float] | None = None
    # The box that started a track, which the association confirms only on its next sighting.
    first_sighting: bool = False


@dataclass(frozen=True)
class SpeechSegment:
    t_start: float
    t_end: float
    text: str
    words: list[tuple[float, float, str]] = field(default_factory=list)


@dataclass(frozen=True)
class TextItem:
    """A line of on-screen text; box is (x1, y1, x2, y2) in source-frame pixels."""

    text: str
    box: tuple[float, float, float, float]
    confidence: float


@dataclass(frozen=True)
class FrameLook:
    """What one sampled frame looks like as a whole. pan / tilt / zoom: the picture's motion per
    second from the frame before (share of the width, right +; of the height, down +; log scale,
    growing +), None when it could not be told; changed: share of the picture that moved apart
    from that, None for the first frame; luma: mean grey level 0-255; colours: (RGB centre,
    share of pixels), largest first."""

    t: float
    pan: float | None
    tilt: float | None
    zoom: float | None
    changed: float | None
    luma: float
    colours: tuple[tuple[tuple[int, int, int], float], ...]


@dataclass(frozen=True)
class Tag:
    """One class a frame shows, as a whole-frame classifier names it: an ImageNet-1k thing or
    a Places365 place."""

    label: str   # the class's first common name: "sulphur-crested cockatoo"
    wnid: str    # its WordNet 3.0 noun synset: "n01819313"
    score: float  # softmax probability
    place: str = ""  # a place's 'indoors' or 'outdoors'; '' for a thing


@dataclass(frozen=True)
class Activity:
    """One Kinetics-400 action a short clip shows, as the video action classifier names it."""

    label: str    # "washing dishes"
    score: float  # softmax probability
