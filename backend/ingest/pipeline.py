"""Ingest: a video file becomes symbolic tables (SQLite) and multi-scale episodic memory (LanceDB).

One streaming pass over sampled frames feeds the tracker, OCR and (if configured) a captioner;
speech is transcribed from the audio track; then tracks are cleaned, tables written, segments
described and embedded. Everything is built in a staging folder that the library moves into
place once every stage has succeeded (see library.py).
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import sqlite_utils
from PIL import Image

from backend.config import Settings
from backend.errors import DiskFullError, InputError
from backend.factory import ModelSet, llm_for
from backend import episodic
from backend.ingest import (actions, activities, animated, decode, frame_pass, objects, picture_facts,
                            preview, scenes, tables)
from backend.ingest.frame_pass import FrameEvidence, Progress
from backend.ingest.tracks import clean_tracks, drop_cut_off, drop_doubles, fill_gaps, relabel
from backend.library import VIDEO_EXTENSIONS, Library, content_hash, disk_full, video_id_for
from backend.graph import build as graph_build
from backend.graph import triples as graph_triples
from backend.schema import create_tables
from models.llm import LLMError
from models.motion import CATEGORY as MOVING
from models.scenes import SceneAnalyser
from models.types import SpeechSegment

log = logging.getLogger(__name__)

# Stage names in order, with the words the app shows for them.
STAGES = {"hash": "Checking file", "probe": "Reading video", "models": "Loading models",
          "frames": "Tracking objects and reading text", "speech": "Transcribing speech",
          "tracks": "Cleaning tracks", "actions": "Reading what people do",
          "scenes": "Finding shots and camera motion", "activities": "Reading what is happening",
          "describe": "Writing the timeline", "graph": "Linking the knowledge graph",
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
        if (entry := library.whole(video_id)) is not None:
            return IngestResult(video_id=video_id, name=entry.name, cached=True,
                                counts=entry.counts(), seconds=seconds, duration=entry.duration)
        # A video is probed before anything is written; an animation only once it is re-timed
        # into the staging folder as the MP4 the library keeps.
        meta = None
        if not animated.is_animated_image(path):
            with stage("probe"):
                meta = decode.probe(path)
        with library.staging(video_id) as folder:
            if meta is None:
                with stage("probe"):
                    source = animated.to_video(path, folder / "source.mp4")
                    meta = decode.probe(source)
            else:
                source = folder / f"source{path.suffix.lower()}"
                shutil.copyfile(path, source)
            with stage("models"):
                model_names = _model_names(settings, models, meta.has_audio)
            with stage("frames"):
                evidence = frame_pass.scan(source, meta, settings, models, progress)
            if evidence.decoded_frames:  # the video is what decodes; the declared count is kept
                model_names["frames_declared"] = meta.frames
                meta = replace(meta, frames=evidence.decoded_frames,
                               duration=evidence.decoded_frames / meta.fps)
            model_names["tracker"] = evidence.tracker
            model_names["motion"] = evidence.motion
            model_names["objects"] = evidence.objects
            model_names["objects_frames"] = evidence.objects_frames  # the rest kept its objects
            model_names["people_frames"] = evidence.people_frames  # the rest kept their people
            model_names["detector_imgsz"] = evidence.detector_imgsz
            model_names["tagger"] = evidence.tagger
            model_names["places"] = evidence.places
            model_names["actions"] = actions.RULES
            model_names["picture"] = [round(x) for x in evidence.picture]
            model_names["categories"] = sorted({*model_names["categories"], *evidence.object_kinds,
                                                *([MOVING] if evidence.motion_tracked else [])})
            seconds.update({f"frames.{k}": v for k, v in evidence.seconds.items()})
            with stage("speech"):
                speech = _transcribe(source, meta, settings, models)
            with stage("tracks"):
                raw = objects.name_moving(objects.settle(evidence.frames))
                # No track can last longer than the video: in one shorter than the minimum (a
                # single frame) whoever is in view is kept, not dropped as noise.
                mapping = clean_tracks(raw, decode.sampled_fps(meta, settings.track_fps),
                                       min(settings.min_track_seconds, meta.duration),
                                       size=(meta.width, meta.height))
                frames = fill_gaps(relabel(raw, mapping), settings.fill_gap_seconds,
                                   (meta.width, meta.height))
                frames = drop_cut_off(drop_doubles(frames), evidence.picture)
                colours = tables.merge_colours(evidence.colours, mapping)
            with stage("actions"):
                acts = actions.perceive(frames, (meta.width, meta.height), evidence.looks)
            with stage("scenes"):
                shots, segment_scenes = _scenes(evidence, meta, settings, progress, frames)
            with stage("activities"):
                happening, model_names["activities"] = activities.read(source, meta, shots,
                                                                       settings, models)
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
                    tracks = tables.write_instances(db, frames, colours, meta, acts,
                                                    evidence.looks)
                    tables.write_actions(db, acts)
                    tables.write_speech(db, speech)
                    tables.write_ocr(db, evidence.ocr_runs)
                    db["shots"].insert_all(asdict(shot) for shot in shots)
                    db["activities"].insert_all(happening)
                    things = picture_facts.tag_rows(evidence.tag_runs, shots, meta.duration)
                    db["tags"].insert_all(things + picture_facts.tag_rows(
                        evidence.place_runs, shots, meta.duration, first_id=len(things) + 1))
                    db["scenes"].insert_all(scene.row(i) for i, scene in enumerate(segment_scenes, start=1))
                    episodes = tables.write_timeline(db, tracks, speech, evidence, meta, settings,
                                               model_names["captions"], (shots, segment_scenes),
                                               acts)
                finally:
                    db.close()
            with stage("graph"):
                _graph(folder / "video.db", settings, models)
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


def _graph(db_path: Path, settings: Settings, models: ModelSet) -> None:
    """The knowledge graph from the tables; with MEMORYREEL_GRAPH_TRIPLES, the LLM's triples
    from speech and captions too (an LLM that cannot be reached leaves the tables' graph and
    says so in `video.models`)."""
    db = sqlite_utils.Database(db_path)
    try:
        graph_build.write(db)
        if not settings.graph_triples:
            return
        try:
            read = graph_triples.add(db, llm_for(settings), models.embedder.embed)
        except LLMError as e:
            read = f"unavailable: {e}"
        row = next(db["video"].rows)
        names = {**json.loads(row["models"] or "{}"), "graph_triples": read}
        db["video"].update(row["id"], {"models": json.dumps(names)})
    finally:
        db.close()


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


def _scenes(evidence: FrameEvidence, meta: decode.VideoMeta, settings: Settings,
            progress: Progress, frames: list) -> tuple[list[scenes.Shot], list[scenes.Scene]]:
    """Shots with their whole-picture facts, and the picture of every fine step (the steps of
    the timeline, before merging)."""
    kinds_at = [(t, {d.category for d in detections}) for _, t, detections in frames]
    shots = picture_facts.with_facts(scenes.shots(evidence.cuts, meta.duration),
                                     evidence.measures, evidence.tag_runs + evidence.place_runs,
                                     kinds_at)
    return shots, scenes.segment_scenes(evidence.looks, evidence.cuts, shots,
                                        tables.steps(meta.duration, settings.segment_seconds),
                                        lambda done, total: progress("scenes", done, total))


def _transcribe(source: Path, meta: decode.VideoMeta, settings: Settings,
                models: ModelSet) -> list[SpeechSegment]:
    if not (settings.asr_enabled and meta.has_audio):
        return []
    from models.asr import SAMPLE_RATE, load_audio
    audio = load_audio(source)
    if audio is None or audio.size == 0:
        return []
    # Sound past the last picture (a recorder that kept the microphone on) is outside the video:
    # the player cannot go there, and the tables would place speech after the end.
    return models.speech.transcribe(audio[:round(meta.duration * SAMPLE_RATE)])


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
    index = min(meta.frames - 1, meta.frames // 3)
    image = Image.fromarray(decode.frames_at(source, meta, [index])[index])
    image.thumbnail((320, 180))
    image.save(target, quality=85)
