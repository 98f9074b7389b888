"""Plain records that cross the boundary between models/ and backend/."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Detection:
    """One tracked box in one frame; box is (x1, y1, x2, y2) in source-frame pixels. `colour`
    (RGB) is measured over the object's own pixels where the detector knows them, which a box
    does not: a loose box around a car holds as much asphalt as paint."""

    track_id: int
    category: str
    box: tuple[float, float, float, float]
    confidence: float
    colour: tuple[float, float, float] | None = None


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
