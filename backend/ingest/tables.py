"""The symbolic tables of one video written from ingest's evidence: instances and their
detections, speech, on-screen text and the timeline with its episodic segments."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import sqlite_utils

from backend.config import Settings
from backend import episodic
from backend.ingest import decode, describe, scenes
from backend.ingest.actions import Action
from backend.ingest.colours import Reading, dominant
from backend.ingest.frame_pass import FrameEvidence
from backend.ingest.tracks import Frame
from models.motion import CATEGORY as MOVING
from models.types import Pose, SpeechSegment, TextItem


def steps(duration: float, step: float) -> list[tuple[float, float]]:
    return [(k * step, min((k + 1) * step, duration)) for k in range(max(1, math.ceil(duration / step)))]


def merge_colours(colours: dict[int, list], mapping: dict[int, int]
                  ) -> dict[int, tuple[Reading | None, Reading | None]]:
    """Each instance's (upper, lower) colour over its frames, None for a part never seen. Its
    colour: the commonest name wins, so a few frames of shade or occlusion do not pull a red
    coat towards brown; a frame whose pixels did not agree stated nothing already
    (`colours.read`), and between frames no lead is asked, as none was measured. Its shares:
    every frame's, averaged."""
    merged: dict[int, list] = defaultdict(list)
    for raw_id, samples in colours.items():
        if raw_id in mapping:
            merged[mapping[raw_id]].extend(samples)
    return {i: tuple(_merged([s[part] for s in samples if s[part] is not None])
                     for part in (0, 1))
            for i, samples in merged.items()}


def _merged(readings: list[Reading]) -> Reading | None:
    if not readings:
        return None
    return Reading(dominant([r.rgb for r in readings if r.rgb is not None], lead=1.0),
                   np.mean([r.shares for r in readings], axis=0))


def write_instances(db: sqlite_utils.Database, frames: list[Frame],
                     colours: dict[int, tuple[Reading | None, Reading | None]],
                     meta: decode.VideoMeta, acts: list[Action] = (), looks: list = ()
                     ) -> dict[int, tuple[str, list[describe.TrackPoint]]]:
    """instances + detections tables; returns {id: (category, trajectory)} for descriptions.
    A person's action column ends with what they do (`acts`), as DoraemonGPT's space table
    keeps an action per instance. Directions are across the scene: the camera's pan, read from
    the frames' `looks`, is taken out of them."""
    shift = scenes.picture_shift(list(looks))
    doing = defaultdict(list)
    for act in acts:
        doing[act.instance_id].append(act)
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
                                        (y2 - y1) / meta.height, d.pose, (x2 - x1) / meta.width,
                                        shift(t))
            tracks.setdefault(d.track_id, (d.category, []))[1].append(point)
            first, _ = first_last.get(d.track_id, (index, index))
            first_last[d.track_id] = (first, index)
    kinds = {i: category for i, (category, _) in tracks.items()}
    instance_rows = []
    for instance_id, (category, points) in sorted(tracks.items()):
        worn = colours.get(instance_id, (None, None))
        upper, lower = (None if r is None else r.rgb for r in worn)
        first_frame, last_frame = first_last[instance_id]
        boxes = sizes[instance_id]
        area = float(np.median([w * h for w, h in boxes])) / (meta.width * meta.height)
        if category == "person":
            looks = describe.appearance(category, upper, lower)
            action = ", ".join(filter(None, [describe.motion(points), describe.body(points),
                                             describe.doing(doing.get(instance_id, []), kinds)]))
        else:
            if category == MOVING:  # no class to name: say what was measured
                aspect = float(np.median([w / max(h, 1.0) for w, h in boxes]))
                looks = describe.moving_object(upper, lower, area, aspect)
            else:
                looks = f"{describe.size(area)} {describe.appearance(category, upper, lower)}"
            action = f"{describe.motion(points)}, {describe.path(points)}"
        instance_rows.append({
            "id": instance_id, "category": category, "first_seen": round(points[0].t, 3),
            "last_seen": round(points[-1].t, 3), "first_frame": first_frame,
            "last_frame": last_frame, "frame_count": len(points),
            "appearance": looks, "action": action,
            "colours": describe.colour_shares(category, *worn),
        })
    db["instances"].insert_all(instance_rows)
    db["detections"].insert_all(rows, batch_size=2000)
    return tracks


def write_actions(db: sqlite_utils.Database, acts: list[Action]) -> None:
    db["actions"].insert_all((act.row(i) for i, act in enumerate(acts, start=1)), batch_size=2000)


def write_speech(db: sqlite_utils.Database, speech: list[SpeechSegment]) -> None:
    db["speech"].insert_all({"id": i, "t_start": round(s.t_start, 3), "t_end": round(s.t_end, 3),
                             "text": s.text.strip()} for i, s in enumerate(speech, start=1))
    db["speech_words"].insert_all(
        {"segment_id": i, "t_start": round(w0, 3), "t_end": round(w1, 3), "word": word.strip()}
        for i, s in enumerate(speech, start=1) for w0, w1, word in s.words)


def write_ocr(db: sqlite_utils.Database, ocr_runs: list[tuple[float, int, list[TextItem]]]) -> None:
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


def write_timeline(db: sqlite_utils.Database, tracks: dict[int, tuple[str, list[describe.TrackPoint]]],
                    speech: list[SpeechSegment], evidence: FrameEvidence, meta: decode.VideoMeta,
                    settings: Settings, source: str,
                    shots_and_scenes: tuple[list[scenes.Shot], list[scenes.Scene]],
                    acts: list[Action] = ()) -> list[episodic.Episode]:
    """timeline table (fine steps; equal consecutive steps merged) and all episodic segments."""
    step = settings.segment_seconds
    shots, segment_scenes = shots_and_scenes
    kinds = {i: category for i, (category, _) in tracks.items()}
    rows: list[dict] = []
    for (t0, t1), scene in zip(steps(meta.duration, step), segment_scenes):
        visible = {i: (category, [p for p in points if t0 <= p.t < t1])
                   for i, (category, points) in tracks.items()}
        visible = {i: v for i, v in visible.items() if v[1]}
        words = _words_between(speech, t0, t1)
        texts = _text_on_screen(evidence.ocr_runs, t1)
        picture = scenes.picture(scene)
        text = describe.segment_description(visible, words, texts, picture,
                                            describe.doing_between(acts, t0, t1, kinds))
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
