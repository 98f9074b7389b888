"""What is happening, shot by shot: a Kinetics-400 video classifier on short windows of frames.

The action rules read bodies and boxes, and name what those can show (walking, riding, holding);
what a scene is about (washing dishes, salsa dancing, mowing a lawn) is in the motion over a
second or so, which a video classifier trained on 400 human activities reads. It wants its
frames at about the 25 fps it was trained on, so its windows are decoded on their own, not
taken from the pass's few frames a second: one window in each shot, and one every
`activity_interval` seconds in a longer shot, each standing for its share of the shot.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from backend.config import Settings
from backend.factory import ModelSet
from backend.ingest import decode
from backend.ingest.frame_pass import optional

_NATIVE_FPS = 25.0   # the rate the classifier's training clips ran at
_TOP = 5             # activities kept per window


def windows(shots: list, fps: float, frames: int, interval: float,
            length: int) -> list[tuple[float, float, list[int]]]:
    """(t_start, t_end, frame indices) per window: each shot cut into pieces of at most about
    `interval` seconds, and in each piece the frames of `frames` / 25 seconds around its middle,
    at about 25 fps (a slower video's every frame, fewer of them; fewer where the piece is
    shorter)."""
    step = max(1, round(fps / _NATIVE_FPS))
    frames = max(1, min(frames, round(frames * fps / step / _NATIVE_FPS)))
    out = []
    for shot in shots:
        span = max(shot.t_end - shot.t_start, 0.0)
        pieces = max(1, round(span / interval)) if interval > 0 else 1
        for k in range(pieces):
            t0 = shot.t_start + span * k / pieces
            t1 = shot.t_start + span * (k + 1) / pieces
            first, last = round(t0 * fps), max(round(t0 * fps), round(t1 * fps) - 1)
            middle = (first + last) // 2
            indices = [middle + (j - frames // 2) * step for j in range(frames)]
            indices = [i for i in indices if first <= i <= min(last, length - 1)]
            if indices:
                out.append((round(t0, 3), round(t1, 3), indices))
    return out


def read(source: Path, meta: decode.VideoMeta, shots: list, settings: Settings,
         models: ModelSet) -> tuple[list[dict], str]:
    """Rows of the activities table and what read them (or why nothing did: ingest goes on
    without activities when the classifier is off or cannot be built)."""
    classifier, failed = optional(lambda: models.video_actions, "what is happening is not read")
    if classifier is None:
        return [], failed or "off"
    rows = []
    cut = windows(shots, meta.fps, classifier.frames, settings.activity_interval, meta.frames)
    for (t0, t1, _), clip in zip(cut, _clips(source, meta, cut)):
        if not clip:
            continue
        for found in classifier.classify([clip], top=_TOP)[0]:
            rows.append({"id": len(rows) + 1, "t_start": t0, "t_end": t1,
                         "activity": found.label, "score": round(found.score, 3)})
    return rows, classifier.name


def _clips(source: Path, meta: decode.VideoMeta, cut: list) -> Iterator[list]:
    """Each window's frames, one window in memory at a time: read by seeking where the
    container seeks exactly (MP4, MOV), else in one pass through the video."""
    if decode.seeks_exactly(source):
        for _, _, indices in cut:
            found = decode.frames_at(source, meta, indices)
            yield [found[i] for i in indices if i in found]
        return
    wanted = {i: k for k, (_, _, indices) in enumerate(cut) for i in indices}
    clip, current = [], 0
    for index, _, frame in decode.iter_frames(source, meta, sorted(wanted)):
        while wanted[index] > current:
            yield clip
            clip, current = [], current + 1
        clip.append(frame)
    while current < len(cut):
        yield clip
        clip, current = [], current + 1
