"""The interface of every kind of model, one Protocol per kind: what backend may call.

backend/factory.py builds the implementations (the adapters beside this file) and types what
it hands out with these, so ingest, ask and memory depend on an interface, never on a library;
a test or a user can pass anything that has these methods. The chat model's and the
captioner's interfaces live with their adapters (`models.llm.ChatModel`,
`models.captioner.Captioner`) and are re-exported here so that every kind is listed in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from models.captioner import Captioner
from models.llm import ChatModel
from models.pose import Box
from models.types import Activity, Detection, FrameLook, Pose, SpeechSegment, Tag, TextItem

__all__ = ["Captioner", "ChatModel", "Embedder", "FrameTagger", "KindsTracker", "MovingObjectTracker", "ObjectTracker",
           "PoseModel", "SceneModel", "SpeechModel", "TextModel", "VideoClassifier"]


class ObjectTracker(Protocol):
    """Detector + tracker over the successive sampled frames of one video."""

    name: str
    categories: dict[int, str]  # class id -> category, everything the detector can report
    gives_pose: bool            # its detections carry poses: no separate pose pass is needed

    def track(self, frame_rgb: np.ndarray) -> list[Detection]: ...

    def fit(self, frames_rgb: list[np.ndarray], largest: int, smallest: int,
            later: Callable[[], list[np.ndarray]] | None = None) -> int:
        """Choose the input size (`smallest` to `largest`) for this video from its first
        frames, or the frames `later` gives where those show nobody."""

    def most_people(self, frames_rgb: list[np.ndarray], imgsz: int) -> int:
        """The most people it finds at once on these frames (whether a video opens on a crowd)."""

    def reset(self) -> None:
        """Forget the tracks of the previous video."""


class KindsTracker(Protocol):
    """Detector + tracker of everyday objects of named kinds (not people) in one video."""

    name: str
    categories: dict[int, str]  # class id -> kind, everything it can report

    def track(self, frame_rgb: np.ndarray) -> list[Detection]: ...

    def reset(self) -> None:
        """Forget the tracks of the previous video."""


class MovingObjectTracker(Protocol):
    """Tracks moving things of any kind in one video; one instance per video."""

    name: str

    @property
    def camera_moving(self) -> bool: ...

    def track(self, frame_rgb: np.ndarray, people: list[Box] = ...,
              camera_moved: bool = ...) -> list[Detection]: ...


class PoseModel(Protocol):
    """Reads the pose of each given person box."""

    name: str

    def read(self, frame_rgb: np.ndarray, boxes: list[Box], imgsz: int | None = None
             ) -> list[Pose | None]:
        """One Pose per box, None where none was found; `imgsz` overrides the input size."""


class SceneModel(Protocol):
    """Measures every sampled frame of one video: shot cuts and the look of each frame."""

    name: str
    looks: list[FrameLook]
    cuts: list[float]
    camera_moved: bool  # between the last two frames added

    def add(self, index: int, t: float, frame_rgb: np.ndarray) -> None: ...


class SpeechModel(Protocol):
    """Speech recognition with word times."""

    name: str

    def transcribe(self, audio: np.ndarray | None) -> list[SpeechSegment]: ...


class TextModel(Protocol):
    """Reads the text visible in a frame (OCR)."""

    name: str

    def read(self, frame_rgb: np.ndarray) -> list[TextItem]: ...


class FrameTagger(Protocol):
    """Names what whole frames show with a classifier's classes: ImageNet-1k things, Places365
    scenes."""

    name: str

    def tags(self, frames_rgb: list[np.ndarray], top: int = 5) -> list[list[Tag]]:
        """One list per frame (HxWx3 uint8 RGB, any size), best first."""


class VideoClassifier(Protocol):
    """Names what is happening in short clips with a video classifier's activities."""

    name: str
    frames: int  # the frames a clip is read as (fewer are looped, more resampled)

    def classify(self, clips: list[list[np.ndarray]], top: int = 5) -> list[list[Activity]]:
        """One list per clip (frames HxWx3 uint8 RGB at about 25 fps), best first."""


class Embedder(Protocol):
    """Texts to L2-normalised float32 vectors, so cosine similarity is a dot product."""

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...
