"""Plain records that cross the boundary between models/ and backend/."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pose:
    """What body keypoints say about one person in one frame; None where they could not tell."""

    posture: str | None = None  # standing, sitting, bending or lying
    arm_raised: bool | None = None
    facing: str | None = None  # camera, away or side


@dataclass(frozen=True)
class Detection:
    """One tracked box in one frame; box is (x1, y1, x2, y2) in source-frame pixels."""

    track_id: int
    category: str
    box: tuple[float, float, float, float]
    confidence: float
    pose: Pose | None = None  # only on the frames the pose model was run on


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
