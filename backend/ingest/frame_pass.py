"""The one pass over a video's sampled frames: people tracked, everyday objects, moving things,
poses, on-screen text, captions and the look of each frame, collected as evidence for the
later stages (tracks, scenes, tables)."""

from __future__ import annotations

import functools
import itertools
import logging
import time
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import numpy as np
from PIL import Image

from backend.config import Settings
from backend.errors import CaptionError
from backend.factory import CAPTION_HINT, ModelSet
from backend.ingest import colours, decode, objects, picture_facts
from backend.ingest.colours import Reading
from backend.ingest.picture_facts import Measure
from backend.ingest.picture import PictureSpan
from backend.ingest.tracks import CROWD, ExitSplitter, Frame
from models.errors import ModelError
from models.llm import LLMError
from models.protocols import (Captioner, FrameTagger, KindsTracker, MovingObjectTracker,
                              ObjectTracker, PoseModel, SceneModel)
from models.types import Detection, FrameLook, TextItem

log = logging.getLogger(__name__)

T = TypeVar("T")

# progress(stage, done, total): called often during long stages; total is 0 when unknown.
Progress = Callable[[str, int, int], None]


@dataclass
class FrameEvidence:
    """What the single pass over frames collects; small per frame, so it may grow with length."""

    frames: list[Frame] = field(default_factory=list)
    # (upper, lower) per track, each time its detector ran
    colours: dict[int, list[tuple[Reading | None, Reading | None]]] = field(
        default_factory=lambda: defaultdict(list))
    ocr_runs: list[tuple[float, int, list[TextItem]]] = field(default_factory=list)
    captions: list[tuple[float, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    motion: str = "off"   # what tracked moving objects, or why nothing did
    motion_tracked: bool = False
    objects: str = "off"  # what tracked everyday objects, or why nothing did
    object_kinds: tuple[str, ...] = ()  # what it could report
    tracker: str = ""        # the person detector and association this video was tracked with
    detector_imgsz: int = 0  # the input size the detector ran at for this video
    picture: tuple[float, float] = (0.0, 0.0)  # the picture's left and right edge (no still bars)
    looks: list[FrameLook] = field(default_factory=list)
    cuts: list[float] = field(default_factory=list)
    decoded_frames: int | None = None  # where fewer frames decode than the container declares
    objects_frames: int = 0  # the sampled frames the object detector ran on
    people_frames: int = 0  # the sampled frames the person tracker ran on
    tagger: str = "off"   # what tagged the whole picture, or why nothing did
    tag_runs: list[tuple[float, list]] = field(default_factory=list)   # (t, [models.tagger.Tag])
    places: str = "off"   # what named the place, or why nothing did
    place_runs: list[tuple[float, list]] = field(default_factory=list)  # (t, [Tag]) of places
    measures: list[tuple[float, Measure]] = field(default_factory=list)  # whole-picture facts


# Sampled frames (the first 0.6 s at 5 fps) whose people choose the detector's input size.
_SIZING_FRAMES = 3
# Frames spread through the video that are also asked whether it shows a crowd (a street
# filmed from a bus, MOT16-13, opens on four people and passes thirty later) and, where the
# opening shows nobody, how large its people are.
_PROBES = 4


def scan(source: Path, meta: decode.VideoMeta, settings: Settings, models: ModelSet,
         progress: Progress) -> FrameEvidence:
    evidence = FrameEvidence()
    motion = models.motion() if settings.motion_enabled else None
    things = _objects(models, settings, evidence)
    analyser = models.scenes(meta.fps)
    reader = models.ocr if settings.ocr_enabled else None
    captioner = models.captioner
    tagger = _tagger(models, evidence)
    placer = _placer(models, evidence)
    last_tagged = last_placed = last_objects = last_people = None
    indices = decode.sample_indices(meta, settings.track_fps)
    next_ocr, next_pose, last_ocr_thumb, last_key = 0.0, 0.0, None, None
    ocr_gap, last_texts = settings.ocr_interval, None
    decoded: list[int] = []
    sampled = _timed(decode.iter_frames(source, meta, indices, decoded), evidence.seconds)
    # The detector's input size is this video's: people far from the camera need a larger one.
    # Where the opening shows nobody, frames spread through the video are asked too.
    first = list(itertools.islice(sampled, _SIZING_FRAMES))
    opening = [frame for _, _, frame in first]
    spread = functools.cache(lambda: decode.spread_frames(source, meta, indices, _PROBES))
    mark = time.perf_counter()
    tracker = _person_tracker(models, opening, settings, spread)
    tracker.reset()
    evidence.tracker = tracker.name
    evidence.detector_imgsz = tracker.fit(opening, settings.detector_max_imgsz,
                                          settings.detector_min_imgsz, spread)
    spread.cache_clear()  # four full frames, not to be held through the whole pass
    evidence.seconds["track"] += time.perf_counter() - mark
    # A pose detector reads everyone's keypoints with their boxes; other detectors need the pose
    # model's own pass, run on sparse frames, at the input size chosen for this video's people
    # where that is larger than its own: at its own 640 px it found the joints of 63 of 721
    # crowd detections on MOT16-04 (1920 px wide), at the 1280 px the detector ran at 411.
    poser = models.pose if settings.pose_enabled and not tracker.gives_pose else None
    pose_size = max(settings.detector_imgsz, evidence.detector_imgsz)
    exits = ExitSplitter((meta.width, meta.height), fresh_from=objects.MOTION_IDS // 2)
    picture = PictureSpan()
    # The object detector runs beside the person tracker: each is one ONNX Runtime session that
    # releases the GIL, and one after the other they left a core idle half the time. The
    # frame's look and its moving things (OpenCV, also GIL-free) run on a thread of their own,
    # in frame order: a frame waits for its moving things until the next frame's people are
    # tracked, off the person tracker's path.
    objects_pool = ThreadPoolExecutor(max_workers=1) if things is not None else None
    looks_pool = ThreadPoolExecutor(max_workers=1)
    held: _Held | None = None
    try:
        for n, (index, t, frame) in enumerate(itertools.chain(first, sampled)):
            thumb = _grey_thumb(frame)  # one coarse picture for every "has it changed?" below
            pending = objects_pool.submit(things.track, frame) if objects_pool is not None \
                and _changed(t, thumb, last_objects, settings.objects_change) else None
            mark = time.perf_counter()
            people_ran = _changed(t, thumb, last_people, settings.people_change)
            if people_ran:
                last_people = (t, thumb, tracker.track(frame))
                evidence.people_frames += 1
            detections = exits(t, last_people[2])
            evidence.seconds["track"] += time.perf_counter() - mark
            if poser is not None and t >= next_pose and detections:
                mark = time.perf_counter()
                detections = _with_poses(poser, frame, detections, pose_size)
                evidence.seconds["pose"] += time.perf_counter() - mark
                next_pose = t + settings.pose_interval
            looked = looks_pool.submit(_look, analyser, motion, index, t, frame,
                                  [d.box for d in detections], evidence.seconds)
            if held is not None:
                held.finish(evidence)
            seen = []
            if things is not None:
                mark = time.perf_counter()  # what the objects cost beyond the people: the wait
                if pending is not None:
                    found = [replace(d, track_id=d.track_id + objects.OBJECT_IDS)
                             for d in pending.result()]
                    last_objects = (t, thumb, found)
                    evidence.objects_frames += 1
                seen = last_objects[2]
                evidence.seconds["objects"] += time.perf_counter() - mark
            picture.add(frame)
            gains = colours.white_patch(frame)
            # Boxes are measured where their detector ran: in between, they stand for a picture
            # that barely changed, and measuring them again only repeated the same votes.
            for d in (detections if people_ran else []) + (seen if pending is not None else []):
                if (measured := _colours(frame, d, gains)) is not None:
                    evidence.colours[d.track_id].append(measured)
            held = _Held(index, t, frame, detections, seen, gains, looked)

            if reader is not None and t >= next_ocr:
                if last_ocr_thumb is None or _largest_change(thumb, last_ocr_thumb) >= settings.ocr_change_threshold:
                    mark = time.perf_counter()
                    # A lone glyph is almost always texture read as text.
                    items = [item for item in reader.read(frame) if len(item.text.strip()) > 1]
                    evidence.ocr_runs.append((t, index, items))
                    evidence.seconds["ocr"] += time.perf_counter() - mark
                    last_ocr_thumb = thumb
                    # Back off while the text stays the same (people moving past a static sign),
                    # return to the base interval as soon as it changes (captions, clocks).
                    texts = {item.text for item in items}
                    ocr_gap = min(ocr_gap * 2, settings.ocr_interval * 4) if texts == last_texts \
                        else settings.ocr_interval
                    last_texts = texts
                next_ocr = t + ocr_gap

            if captioner is not None:
                if _key_frame(t, thumb, last_key, settings.caption_interval, settings.caption_change):
                    mark = time.perf_counter()
                    evidence.captions.append((t, _caption(captioner, frame, t)))
                    evidence.seconds["caption"] += time.perf_counter() - mark
                    last_key = (t, thumb)
            # The whole picture: every few seconds and where the view changes (a cut, a new place).
            if _key_frame(t, thumb, last_tagged, settings.tag_interval, settings.caption_change):
                mark = time.perf_counter()
                evidence.measures.append((t, picture_facts.measure(frame)))
                if tagger is not None:
                    evidence.tag_runs.append((t, tagger.tags([frame])[0]))
                evidence.seconds["tags"] += time.perf_counter() - mark
                last_tagged = (t, thumb)
            if placer is not None and _key_frame(t, thumb, last_placed, settings.place_interval,
                                                 settings.caption_change):
                mark = time.perf_counter()
                evidence.place_runs.append((t, placer.tags([frame])[0]))
                evidence.seconds["places"] += time.perf_counter() - mark
                last_placed = (t, thumb)
            progress("frames", n + 1, len(indices))
        if held is not None:
            held.finish(evidence)
    finally:
        if objects_pool is not None:
            objects_pool.shutdown()
        looks_pool.shutdown()
    if motion is not None and motion.camera_moving:
        # Background subtraction sees the whole frame move: its blobs are no objects.
        evidence.frames = [(i, t, [d for d in dets if not objects.is_moving(d)])
                           for i, t, dets in evidence.frames]
    evidence.motion = "off" if motion is None else \
        "skipped: the camera moves" if motion.camera_moving else motion.name
    evidence.motion_tracked = motion is not None and not motion.camera_moving
    if decoded and decoded[0] < meta.frames:
        evidence.decoded_frames = decoded[0]
    evidence.looks, evidence.cuts = analyser.looks, analyser.cuts
    evidence.picture = picture.span()
    return evidence


def _look(analyser: SceneModel, motion: MovingObjectTracker | None, index: int, t: float,
          frame: np.ndarray, people: list[tuple[float, float, float, float]],
          seconds: dict[str, float]) -> list[Detection]:
    """The frame's look (cuts, the camera's own motion) and then its moving things, which need
    to know whether the camera moved into this frame. Their seconds are kept apart from the
    stage budget's: they run beside the person tracker, and only the wait for them counts."""
    mark = time.perf_counter()
    analyser.add(index, t, frame)
    seconds["beside.scenes"] += time.perf_counter() - mark
    if motion is None:
        return []
    mark = time.perf_counter()
    # Where the whole picture moved, so did the camera: nothing stands still to subtract.
    moving = motion.track(frame, people=people, camera_moved=analyser.camera_moved)
    seconds["beside.motion"] += time.perf_counter() - mark
    # Their own id range: clean_tracks renumbers everything together afterwards.
    return [replace(d, track_id=d.track_id + objects.MOTION_IDS) for d in moving]


@dataclass
class _Held:
    """A frame whose people and objects are read, waiting for its moving things."""

    index: int
    t: float
    frame: np.ndarray
    people: list[Detection]
    things: list[Detection]
    gains: np.ndarray
    looked: Future

    def finish(self, evidence: FrameEvidence) -> None:
        mark = time.perf_counter()
        moving = self.looked.result()
        evidence.seconds["motion"] += time.perf_counter() - mark
        for d in moving:
            if (measured := _colours(self.frame, d, self.gains)) is not None:
                evidence.colours[d.track_id].append(measured)
        evidence.frames.append((self.index, self.t, self.people + moving + self.things))


def _timed(frames: Iterator[T], seconds: dict[str, float]) -> Iterator[T]:
    """`frames` as they come, the time spent decoding them added to `seconds["decode"]`: the
    stage budget of `bench ingest` needs it apart from the models that read the frames."""
    while True:
        mark = time.perf_counter()
        item = next(frames, None)
        seconds["decode"] += time.perf_counter() - mark
        if item is None:
            return
        yield item


def _person_tracker(models: ModelSet, first: list[np.ndarray], settings: Settings,
                    later: Callable[[], list[np.ndarray]]) -> ObjectTracker:
    """The crowd detector where it sees a crowd on the opening frames or on frames `later`
    gives (read only when the opening shows none), else the person detector.
    The pose model finds a few of 20-50 people in a square or a mall (4 of 30 on MOT16-02 at
    640 px), a COCO detector most of those partly in view; on a few large people the pose
    model is as good and gives postures with its boxes (`bench tracking`, docs/PERCEPTION.md)."""
    crowd = models.crowd_tracker
    if crowd is None or not first:
        return models.tracker
    size = settings.detector_max_imgsz
    if crowd.most_people(first, size) > CROWD:
        return crowd
    spread = later()
    return crowd if spread and crowd.most_people(spread, size) > CROWD else models.tracker


def _objects(models: ModelSet, settings: Settings, evidence: FrameEvidence) -> KindsTracker | None:
    """The everyday-object tracker, reset for this video; None, with the reason recorded in
    `evidence.objects`, when it is off or was never built (ingest goes on with people and
    moving things)."""
    if not settings.objects_enabled:
        return None
    things, failed = optional(lambda: models.objects, "everyday objects are not tracked")
    if things is None:
        evidence.objects = failed
        return None
    things.reset()
    evidence.objects = things.name
    evidence.object_kinds = tuple(sorted(set(things.categories.values())))
    return things


def _tagger(models: ModelSet, evidence: FrameEvidence) -> FrameTagger | None:
    """The ImageNet tagger; None when tags are off or it could not be built, the reason
    recorded in `evidence.tagger` (ingest goes on without tags)."""
    tagger, failed = optional(lambda: models.tagger, "the whole picture is not tagged")
    evidence.tagger = failed or (tagger.name if tagger is not None else "off")
    return tagger


def _placer(models: ModelSet, evidence: FrameEvidence) -> FrameTagger | None:
    """The Places365 tagger; None when place tags are off or it could not be built, the
    reason recorded in `evidence.places`."""
    placer, failed = optional(lambda: models.places, "the place is not named")
    evidence.places = failed or (placer.name if placer is not None else "off")
    return placer


def optional(build: Callable[[], T], what: str) -> tuple[T | None, str]:
    """A model ingest can do without: (the model, '') or (None, 'unavailable: why'), logged."""
    try:
        return build(), ""
    except ModelError as e:
        log.warning("%s in this video: %s", what, e)
        return None, f"unavailable: {e}"


def _with_poses(poser: PoseModel, frame: np.ndarray, detections: list[Detection],
                imgsz: int) -> list[Detection]:
    """The detections with the pose of each person the pose model found, read at input size
    `imgsz`; others unchanged."""
    people = [k for k, d in enumerate(detections) if d.category == "person"]
    poses = dict(zip(people, poser.read(frame, [detections[k].box for k in people], imgsz)))
    return [replace(d, pose=poses.get(k)) for k, d in enumerate(detections)]


# A detector runs at least this often: a track unseen for longer would be dropped by the
# association's buffer, and slow drifts add up.
_DETECTOR_MAX_GAP = 1.0


def _changed(t: float, thumb: np.ndarray, last: tuple[float, np.ndarray, list] | None,
             change: float) -> bool:
    """Run a detector (people's or objects') on this frame? Where the picture changed
    (`_largest_change`: someone moving in one corner counts) since the frame it last ran on,
    and once a second; in between, what it found there stands."""
    if last is None or change <= 0:
        return True
    last_t, last_thumb, _ = last
    return t - last_t >= _DETECTOR_MAX_GAP - 1e-6 or _largest_change(thumb, last_thumb) >= change


def _key_frame(t: float, thumb: np.ndarray, last: tuple[float, np.ndarray] | None,
               interval: float, change: float) -> bool:
    """Caption (or tag) this frame? The first one, one whose view differs enough from the
    frame done last (a cut, or a camera that has moved on), and one every `interval` seconds."""
    if last is None:
        return True
    last_t, last_thumb = last
    return t - last_t >= interval - 1e-6 or _view_change(thumb, last_thumb) >= change


def _view_change(a: np.ndarray, b: np.ndarray) -> float:
    """Median grey-level change: high only when most of the frame changed, as at a cut; people
    walking through a still shot move the mean, not the median."""
    return float(np.median(np.abs(a - b)))


def _caption(captioner: Captioner, frame: np.ndarray, t: float) -> str:
    try:
        return captioner.caption(frame)
    except LLMError as e:
        raise CaptionError(f"captioning the frame at {t:.1f} s with {captioner.name} failed, so "
                           f"ingest stopped and added nothing to the library: {e}"
                           f"{CAPTION_HINT}") from e


_THUMB = (54, 96)  # rows, columns: a 6 x 8 grid of 9 x 12 blocks


def _grey_thumb(frame: np.ndarray) -> np.ndarray:
    """A coarse grey image for change detection: cheap, and blind to sensor noise."""
    grey = Image.fromarray(frame).convert("L").resize(_THUMB[::-1], Image.Resampling.BOX)
    return np.asarray(grey, dtype=np.float32)


def _largest_change(a: np.ndarray, b: np.ndarray) -> float:
    """Mean grey-level change of the most-changed block: a new caption or a ticking clock in
    one corner counts, although it barely moves the mean of the whole frame."""
    diff = np.abs(a - b).reshape(6, _THUMB[0] // 6, 8, _THUMB[1] // 8)
    return float(diff.mean(axis=(1, 3)).max())


def _colours(frame: np.ndarray, detection: Detection, gains: np.ndarray
             ) -> tuple[Reading | None, Reading | None] | None:
    """(upper, lower) colour of a detection: the one measured over its own pixels where the
    detector knows them (moving objects); a person's clothes by body part
    (`colours.person_colours`, None for a part out of view); else the middle of the box.
    None where nothing was measured."""
    if detection.colour is not None:
        colour = colours.read(np.asarray(detection.colour)[None])
        return colour, colour
    if detection.category == "person":
        keypoints = detection.pose.keypoints if detection.pose is not None else None
        upper, lower = colours.person_colours(frame, detection.box, keypoints, gains)
    else:
        upper = lower = colours.object_colour(frame, detection.box, gains)
    return None if upper is None and lower is None else (upper, lower)
