"""Ingest: a video file becomes symbolic tables (SQLite) and multi-scale episodic memory (LanceDB).

One streaming pass over sampled frames feeds the tracker, OCR and (if configured) a captioner;
speech is transcribed from the audio track; then tracks are cleaned, tables written, segments
described and embedded. Everything is built in a staging folder that the library moves into
place only at the end (see library.py).
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import shutil
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import sqlite_utils
from PIL import Image

from backend import decode, describe, episodic, preview, scenes
from backend.config import Settings
from backend.errors import CaptionError, DiskFullError, InputError
from backend.factory import CAPTION_HINT, ModelSet
from backend.library import VIDEO_EXTENSIONS, Library, content_hash, disk_full, video_id_for
from backend.schema import create_tables
from backend.tracks import ExitSplitter, Frame, clean_tracks, fill_gaps, relabel
from models.motion import CATEGORY as MOVING
from models.llm import LLMError
from models.protocols import Captioner, PoseModel
from models.scenes import SceneAnalyser
from models.types import Detection, FrameLook, Pose, SpeechSegment, TextItem

log = logging.getLogger(__name__)

# progress(stage, done, total): called often during long stages; total is 0 when unknown.
Progress = Callable[[str, int, int], None]

# Stage names in order, with the words the app shows for them.
STAGES = {"hash": "Checking file", "probe": "Reading video", "models": "Loading models",
          "frames": "Tracking objects and reading text", "speech": "Transcribing speech",
          "tracks": "Cleaning tracks", "scenes": "Finding shots and camera motion",
          "describe": "Writing the timeline",
          "embed": "Building episodic memory", "preview": "Preparing the player"}


@dataclass
class IngestResult:
    video_id: str
    name: str
    cached: bool
    counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    duration: float = 0.0

    def as_dict(self) -> dict:
        return {"video_id": self.video_id, "name": self.name, "cached": self.cached,
                "duration": self.duration, "counts": self.counts,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


@dataclass
class _FrameEvidence:
    """What the single pass over frames collects; small per frame, so it may grow with length."""

    frames: list[Frame] = field(default_factory=list)
    colours: dict[int, list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=lambda: defaultdict(list))
    ocr_runs: list[tuple[float, int, list[TextItem]]] = field(default_factory=list)
    captions: list[tuple[float, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    motion: str = "off"   # what tracked moving objects, or why nothing did
    motion_tracked: bool = False
    detector_imgsz: int = 0  # the input size the detector ran at for this video
    looks: list[FrameLook] = field(default_factory=list)
    cuts: list[float] = field(default_factory=list)


# Sampled frames (the first 0.6 s at 5 fps) whose people choose the detector's input size.
_SIZING_FRAMES = 3
# Raw ids of moving-object tracks start here, apart from the person tracker's; ids the person
# tracker's re-found exits get (`ExitSplitter`) start at half of it.
_MOTION_IDS = 1_000_000


def check_upload(path: Path, max_bytes: int) -> None:
    """Cheap checks before anything is read or written: exists, type by extension, size."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"'{path}' does not exist or is not a file.")
    if path.suffix.lower() not in VIDEO_EXTENSIONS:
        allowed = ", ".join(sorted(VIDEO_EXTENSIONS))
        raise InputError(f"'{path.name}' is not a supported video type (allowed: {allowed}).")
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"'{path.name}' is empty (0 bytes).")
    if size > max_bytes:
        raise InputError(f"'{path.name}' is {size / 2**20:.0f} MiB; the limit is "
                         f"{max_bytes / 2**20:.0f} MiB (MEMORYREEL_MAX_UPLOAD_MB).")


def ingest(path: Path, settings: Settings, progress: Progress | None = None,
           models: ModelSet | None = None) -> IngestResult:
    """Add the video at `path` to the library; a file already there (same sha256) is not redone."""
    path = Path(path)
    progress = progress or (lambda stage, done, total: None)
    models = models or ModelSet(settings)
    library = Library(settings.home)
    check_upload(path, settings.max_upload_mb * 2**20)
    library.clean_leftovers()  # what killed ingests and interrupted deletes left behind
    seconds: dict[str, float] = {}

    started = time.perf_counter()

    @contextmanager
    def stage(name: str):
        progress(name, 0, 1)
        mark = time.perf_counter()
        yield
        seconds[name] = time.perf_counter() - mark

    with stage("hash"):
        sha256 = content_hash(path)
        video_id = video_id_for(sha256)
    # One ingest per file at a time: a second caller waits here, then finds it cached.
    # A full disk is named once the lock is released, and so the staging folder removed.
    with _disk_full_named(path, settings.home), library.lock(video_id):
        if library.has(video_id):
            entry = library.get(video_id)
            return IngestResult(video_id=video_id, name=entry.name, cached=True,
                                counts=entry.counts(), seconds=seconds, duration=entry.duration)
        with stage("probe"):
            meta = decode.probe(path)

        with library.staging(video_id) as folder:
            source = folder / f"source{path.suffix.lower()}"
            shutil.copyfile(path, source)
            with stage("models"):
                model_names = _model_names(settings, models, meta.has_audio)
            with stage("frames"):
                evidence = _frame_pass(source, meta, settings, models, progress)
            model_names["motion"] = evidence.motion
            model_names["detector_imgsz"] = evidence.detector_imgsz
            if evidence.motion_tracked:
                model_names["categories"] = sorted({*model_names["categories"], MOVING})
            seconds.update({f"frames.{k}": v for k, v in evidence.seconds.items()})
            with stage("speech"):
                speech = _transcribe(source, meta, settings, models)
            with stage("tracks"):
                mapping = clean_tracks(evidence.frames, decode.sampled_fps(meta, settings.track_fps),
                                       settings.min_track_seconds, size=(meta.width, meta.height))
                frames = fill_gaps(relabel(evidence.frames, mapping), settings.fill_gap_seconds,
                                   (meta.width, meta.height))
                colours = _merge_colours(evidence.colours, mapping)
            with stage("scenes"):
                shots, segment_scenes = _scenes(evidence, meta, settings, progress)
            with stage("describe"):
                db = sqlite_utils.Database(folder / "video.db")
                try:
                    create_tables(db)
                    db["video"].insert({
                        "id": video_id, "name": path.name, "sha256": sha256, "fps": meta.fps,
                        "frames": meta.frames, "duration": meta.duration, "width": meta.width,
                        "height": meta.height, "has_audio": int(meta.has_audio), "codec": meta.codec,
                        "ingested_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        "models": json.dumps(model_names),
                    })
                    tracks = _write_instances(db, frames, colours, meta)
                    _write_speech(db, speech)
                    _write_ocr(db, evidence.ocr_runs)
                    db["shots"].insert_all(asdict(shot) for shot in shots)
                    db["scenes"].insert_all(scene.row(i) for i, scene in enumerate(segment_scenes, start=1))
                    episodes = _write_timeline(db, tracks, speech, evidence, meta, settings,
                                               model_names["captions"], (shots, segment_scenes))
                finally:
                    db.close()
            with stage("embed"):
                vectors = models.embedder.embed([e.text for e in episodes])
                episodic.write(folder, video_id, episodes, vectors)
            with stage("preview"):
                _write_thumbnail(source, meta, folder / "thumb.jpg")
                if preview.needs_preview(source, meta):
                    preview.write_preview(source, meta, folder / "preview.mp4")

        counts = library.get(video_id).counts()
        seconds["total"] = time.perf_counter() - started
        log.info("ingested %s as %s in %.1f s", path.name, video_id, seconds["total"])
        return IngestResult(video_id=video_id, name=path.name, cached=False, counts=counts,
                            seconds=seconds, duration=meta.duration)


@contextmanager
def _disk_full_named(path: Path, home: Path):
    """A write that finds the disk full ends the ingest as a DiskFullError that says so, rather
    than as whichever library's error (OSError, SQLite, LanceDB) met it first."""
    try:
        yield
    except Exception as e:
        if not disk_full(e):
            raise
        log.warning("ingest of %s stopped: the disk is full (%s)", path.name, e)
        need = math.ceil(path.stat().st_size / 2**20)
        raise DiskFullError(
            f"Not enough disk space: the disk holding the library ({home}) filled up while "
            f"ingesting '{path.name}'. Nothing was added to the library and the partial copy "
            f"was removed. Free some space (the video alone needs {need} MiB) and try again."
        ) from None


def _frame_pass(source: Path, meta: decode.VideoMeta, settings: Settings, models: ModelSet,
                progress: Progress) -> _FrameEvidence:
    evidence = _FrameEvidence()
    tracker = models.tracker
    tracker.reset()
    motion = models.motion() if settings.motion_enabled else None
    analyser = models.scenes(meta.fps)
    reader = models.ocr if settings.ocr_enabled else None
    # A pose detector reads everyone's keypoints with their boxes; other detectors need the pose
    # model's own pass, run on sparse frames.
    poser = models.pose if settings.pose_enabled and not tracker.gives_pose else None
    captioner = models.captioner
    indices = decode.sample_indices(meta, settings.track_fps)
    next_ocr, next_pose, last_ocr_thumb, last_key = 0.0, 0.0, None, None
    ocr_gap, last_texts = settings.ocr_interval, None
    sampled = decode.iter_frames(source, meta, indices)
    # The detector's input size is this video's: people far from the camera need a larger one.
    first = list(itertools.islice(sampled, _SIZING_FRAMES))
    mark = time.perf_counter()
    evidence.detector_imgsz = tracker.fit([frame for _, _, frame in first],
                                          settings.detector_max_imgsz)
    evidence.seconds["track"] += time.perf_counter() - mark
    exits = ExitSplitter((meta.width, meta.height), fresh_from=_MOTION_IDS // 2)
    for n, (index, t, frame) in enumerate(itertools.chain(first, sampled)):
        mark = time.perf_counter()
        detections = exits(t, tracker.track(frame))
        evidence.seconds["track"] += time.perf_counter() - mark
        if poser is not None and t >= next_pose and detections:
            mark = time.perf_counter()
            detections = _with_poses(poser, frame, detections)
            evidence.seconds["pose"] += time.perf_counter() - mark
            next_pose = t + settings.pose_interval
        if motion is not None:
            mark = time.perf_counter()
            moving = motion.track(frame, people=[d.box for d in detections])
            # Their own id range: clean_tracks renumbers everything together afterwards.
            detections = detections + [replace(d, track_id=d.track_id + _MOTION_IDS) for d in moving]
            evidence.seconds["motion"] += time.perf_counter() - mark
        evidence.frames.append((index, t, detections))
        mark = time.perf_counter()
        analyser.add(index, t, frame)
        evidence.seconds["scenes"] += time.perf_counter() - mark
        for d in detections:
            evidence.colours[d.track_id].append(_colours(frame, d))

        if reader is not None and t >= next_ocr:
            thumb = _grey_thumb(frame)
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
            thumb = _grey_thumb(frame)
            if _key_frame(t, thumb, last_key, settings):
                mark = time.perf_counter()
                evidence.captions.append((t, _caption(captioner, frame, t)))
                evidence.seconds["caption"] += time.perf_counter() - mark
                last_key = (t, thumb)
        progress("frames", n + 1, len(indices))
    if motion is not None and motion.camera_moving:
        # Background subtraction sees the whole frame move: its blobs are no objects.
        evidence.frames = [(i, t, [d for d in dets if d.track_id < _MOTION_IDS])
                           for i, t, dets in evidence.frames]
    evidence.motion = "off" if motion is None else \
        "skipped: the camera moves" if motion.camera_moving else motion.name
    evidence.motion_tracked = motion is not None and not motion.camera_moving
    evidence.looks, evidence.cuts = analyser.looks, analyser.cuts
    return evidence


def _with_poses(poser: PoseModel, frame: np.ndarray, detections: list[Detection]) -> list[Detection]:
    """The detections with the pose of each person the pose model found; others unchanged."""
    people = [k for k, d in enumerate(detections) if d.category == "person"]
    poses = dict(zip(people, poser.read(frame, [detections[k].box for k in people])))
    return [replace(d, pose=poses.get(k)) for k, d in enumerate(detections)]


def _key_frame(t: float, thumb: np.ndarray, last: tuple[float, np.ndarray] | None,
               settings: Settings) -> bool:
    """Caption this frame? The first one, one whose view differs enough from the frame captioned
    last (a cut, or a camera that has moved on), and one every caption_interval seconds."""
    if last is None:
        return True
    last_t, last_thumb = last
    return (t - last_t >= settings.caption_interval - 1e-6
            or _view_change(thumb, last_thumb) >= settings.caption_change)


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


def _scenes(evidence: _FrameEvidence, meta: decode.VideoMeta, settings: Settings,
            progress: Progress) -> tuple[list[scenes.Shot], list[scenes.Scene]]:
    """Shots, and the picture of every fine step (the steps of the timeline, before merging)."""
    shots = scenes.shots(evidence.cuts, meta.duration)
    return shots, scenes.segment_scenes(evidence.looks, evidence.cuts, shots,
                                        _steps(meta.duration, settings.segment_seconds),
                                        lambda done, total: progress("scenes", done, total))


def _steps(duration: float, step: float) -> list[tuple[float, float]]:
    return [(k * step, min((k + 1) * step, duration)) for k in range(max(1, math.ceil(duration / step)))]


def _transcribe(source: Path, meta: decode.VideoMeta, settings: Settings,
                models: ModelSet) -> list[SpeechSegment]:
    if not (settings.asr_enabled and meta.has_audio):
        return []
    from models.asr import load_audio
    audio = load_audio(source)
    if audio is None or audio.size == 0:
        return []
    return models.speech.transcribe(audio)


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


def _colours(frame: np.ndarray, detection: Detection) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) colour of a detection: the one measured over its own pixels where the
    detector knows them (moving objects), else the halves of its box."""
    if detection.colour is not None:
        colour = np.asarray(detection.colour)
        return colour, colour
    return _box_colours(frame, detection.box)


def _box_colours(frame: np.ndarray, box: tuple[float, float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Mean colour of the upper and lower half of the box's central strip (less background)."""
    h, w = frame.shape[:2]
    x1, y1, x2, y2 = (int(round(v)) for v in box)
    x1, x2 = max(0, x1), min(w, x2)
    y1, y2 = max(0, y1), min(h, y2)
    if x2 - x1 < 4 or y2 - y1 < 8:
        return np.zeros(3), np.zeros(3)
    cx1, cx2 = x1 + (x2 - x1) // 4, x2 - (x2 - x1) // 4
    mid = y1 + (y2 - y1) // 2
    # Top from 15-50 % of the height (skips the head), bottom from 50-85 % (skips the feet).
    top = frame[y1 + (y2 - y1) * 15 // 100:mid, cx1:cx2:2]
    bottom = frame[mid:y1 + (y2 - y1) * 85 // 100, cx1:cx2:2]
    return top.reshape(-1, 3).mean(axis=0), bottom.reshape(-1, 3).mean(axis=0)


def _merge_colours(colours: dict[int, list], mapping: dict[int, int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    merged: dict[int, list] = defaultdict(list)
    for raw_id, samples in colours.items():
        if raw_id in mapping:
            merged[mapping[raw_id]].extend(samples)
    return {i: (np.median([s[0] for s in samples], axis=0), np.median([s[1] for s in samples], axis=0))
            for i, samples in merged.items()}


def _write_instances(db: sqlite_utils.Database, frames: list[Frame],
                     colours: dict[int, tuple[np.ndarray, np.ndarray]],
                     meta: decode.VideoMeta) -> dict[int, tuple[str, list[describe.TrackPoint]]]:
    """instances + detections tables; returns {id: (category, trajectory)} for descriptions."""
    tracks: dict[int, tuple[str, list[describe.TrackPoint]]] = {}
    rows, first_last = [], {}
    sizes: dict[int, list[tuple[float, float]]] = defaultdict(list)  # box (width, height) per track
    for index, t, detections in frames:
        for d in detections:
            x1, y1, x2, y2 = d.box
            pose = d.pose or Pose()
            rows.append({"instance_id": d.track_id, "frame": index, "t": round(t, 3),
                         "x1": x1, "y1": y1, "x2": x2, "y2": y2,
                         "confidence": round(d.confidence, 3), "posture": pose.posture,
                         "arm_raised": None if pose.arm_raised is None else int(pose.arm_raised),
                         "facing": pose.facing})
            sizes[d.track_id].append((x2 - x1, y2 - y1))
            point = describe.TrackPoint(t, (x1 + x2) / 2 / meta.width, (y1 + y2) / 2 / meta.height,
                                        (y2 - y1) / meta.height, d.pose, (x2 - x1) / meta.width)
            tracks.setdefault(d.track_id, (d.category, []))[1].append(point)
            first, _ = first_last.get(d.track_id, (index, index))
            first_last[d.track_id] = (first, index)
    instance_rows = []
    for instance_id, (category, points) in sorted(tracks.items()):
        upper, lower = colours.get(instance_id, (None, None))
        first_frame, last_frame = first_last[instance_id]
        if category == MOVING:  # no class to name: say what was measured
            boxes = sizes[instance_id]
            area = float(np.median([w * h for w, h in boxes])) / (meta.width * meta.height)
            aspect = float(np.median([w / max(h, 1.0) for w, h in boxes]))
            looks = describe.moving_object(upper, lower, area, aspect)
            action = f"{describe.motion(points)}, {describe.path(points)}"
        else:
            looks = describe.appearance(category, upper, lower)
            action = ", ".join(filter(None, [describe.motion(points), describe.body(points)]))
        instance_rows.append({
            "id": instance_id, "category": category, "first_seen": round(points[0].t, 3),
            "last_seen": round(points[-1].t, 3), "first_frame": first_frame,
            "last_frame": last_frame, "frame_count": len(points),
            "appearance": looks, "action": action,
        })
    db["instances"].insert_all(instance_rows)
    db["detections"].insert_all(rows, batch_size=2000)
    return tracks


def _write_speech(db: sqlite_utils.Database, speech: list[SpeechSegment]) -> None:
    db["speech"].insert_all({"id": i, "t_start": round(s.t_start, 3), "t_end": round(s.t_end, 3),
                             "text": s.text.strip()} for i, s in enumerate(speech, start=1))
    db["speech_words"].insert_all(
        {"segment_id": i, "t_start": round(w0, 3), "t_end": round(w1, 3), "word": word.strip()}
        for i, s in enumerate(speech, start=1) for w0, w1, word in s.words)


def _write_ocr(db: sqlite_utils.Database, ocr_runs: list[tuple[float, int, list[TextItem]]]) -> None:
    db["ocr"].insert_all({
        "t": round(t, 3), "frame": index, "text": item.text, "x1": item.box[0], "y1": item.box[1],
        "x2": item.box[2], "y2": item.box[3], "confidence": round(item.confidence, 3),
    } for t, index, items in ocr_runs for item in items)


def _text_on_screen(ocr_runs: list[tuple[float, int, list[TextItem]]], t_end: float) -> list[str]:
    """Text of the latest OCR run before t_end: OCR is skipped only while the frame is unchanged."""
    latest = [items for t, _, items in ocr_runs if t < t_end]
    return list(dict.fromkeys(item.text for item in latest[-1])) if latest else []


def _latest_caption(captions: list[tuple[float, str]], t_end: float) -> str:
    """The caption of the latest key frame before t_end: it holds until the view changes,
    which is when the next key frame is captioned."""
    latest = [caption for t, caption in captions if t < t_end]
    return latest[-1] if latest else ""


def _words_between(speech: list[SpeechSegment], t0: float, t1: float) -> str:
    """What is being said during [t0, t1): a word said across a step boundary belongs to both
    steps (by its midpoint alone, a word said over 39.7-40.3 s went missing from "at 40 s")."""
    words = []
    for segment in speech:
        if segment.t_end < t0 or segment.t_start >= t1:
            continue
        if segment.words:
            words += [w.strip() for w0, w1, w in segment.words if _during(w0, w1, t0, t1)]
        elif _during(segment.t_start, segment.t_end, t0, t1):
            words.append(segment.text.strip())
    return " ".join(w for w in words if w)


def _during(start: float, end: float, t0: float, t1: float) -> bool:
    return t0 <= start < t1 or (start < t1 and end > t0)


def _write_timeline(db: sqlite_utils.Database, tracks: dict[int, tuple[str, list[describe.TrackPoint]]],
                    speech: list[SpeechSegment], evidence: _FrameEvidence, meta: decode.VideoMeta,
                    settings: Settings, source: str,
                    shots_and_scenes: tuple[list[scenes.Shot], list[scenes.Scene]]) -> list[episodic.Episode]:
    """timeline table (fine steps; equal consecutive steps merged) and all episodic segments."""
    step = settings.segment_seconds
    shots, segment_scenes = shots_and_scenes
    rows: list[dict] = []
    for (t0, t1), scene in zip(_steps(meta.duration, step), segment_scenes):
        visible = {i: (category, [p for p in points if t0 <= p.t < t1])
                   for i, (category, points) in tracks.items()}
        visible = {i: v for i, v in visible.items() if v[1]}
        words = _words_between(speech, t0, t1)
        texts = _text_on_screen(evidence.ocr_runs, t1)
        picture = scenes.picture(scene)
        text = describe.segment_description(visible, words, texts, picture)
        if caption := _latest_caption(evidence.captions, t1):
            text = f"{caption} {text}"
        row = {"t_start": round(t0, 3), "t_end": round(t1, 3), "description": text,
               "source": source, "speech": words, "ocr": "; ".join(texts),
               "instance_ids": json.dumps(sorted(visible))}
        # Dedupe: a step identical to the one before (a still scene) extends it.
        if rows and not words and _same_scene(rows[-1], row):
            rows[-1]["t_end"] = row["t_end"]
        else:
            rows.append(row)
    for i, row in enumerate(rows, start=1):
        row["id"] = i
    db["timeline"].insert_all(rows)

    episodes = [episodic.Episode("fine", step, r["t_start"], r["t_end"], r["description"],
                                 json.loads(r["instance_ids"])) for r in rows]
    described = {row["id"]: f"{row['appearance']}, {row['action']}" for row in db["instances"].rows}
    instance_text = {i: (category, described[i]) for i, (category, _) in tracks.items()}
    for name, seconds in episodic.scale_windows(meta.duration, step):
        for k in range(max(1, math.ceil(meta.duration / seconds - 1e-9))):
            t0, t1 = k * seconds, min((k + 1) * seconds, meta.duration)
            present = {i: instance_text[i] for i, (_, points) in tracks.items()
                       if any(t0 <= p.t < t1 for p in points)}
            texts = list(dict.fromkeys(item.text for t, _, items in evidence.ocr_runs
                                       if t0 <= t < t1 for item in items))
            seen = list(dict.fromkeys(c for t, c in evidence.captions if t0 <= t < t1))
            picture = scenes.pictures_over(segment_scenes, shots, t0, t1)
            summary = describe.window_summary(t0, t1, present, _words_between(speech, t0, t1),
                                              texts, picture, seen)
            episodes.append(episodic.Episode(name, seconds, round(t0, 3), round(t1, 3), summary,
                                             sorted(present)))
    return episodes


def _same_scene(previous: dict, row: dict) -> bool:
    return (previous["instance_ids"] == row["instance_ids"] == "[]"
            and previous["description"] == row["description"])


def _model_names(settings: Settings, models: ModelSet, has_audio: bool) -> dict:
    captioner = models.captioner
    return {
        "tracker": models.tracker.name,
        # What the detector could report at all, so an answer can tell "none seen" from "cannot see".
        "categories": sorted(set(models.tracker.categories.values())),
        "speech": models.speech.name if settings.asr_enabled and has_audio else "",
        "ocr": models.ocr.name if settings.ocr_enabled else "",
        "pose": models.pose.name if settings.pose_enabled else "",
        "captions": captioner.name if captioner is not None else "evidence",
        "scenes": SceneAnalyser.name,
        "embedder": models.embedder.name,
    }


def _write_thumbnail(source: Path, meta: decode.VideoMeta, target: Path) -> None:
    reader = decode.open_reader(source)
    frame = reader[min(meta.frames - 1, meta.frames // 3)].asnumpy()
    image = Image.fromarray(frame)
    image.thumbnail((320, 180))
    image.save(target, quality=85)
