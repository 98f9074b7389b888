"""`bench objects`: the COCO object detector beside the person detector, on the same frames.

Each clip's frames are sampled as ingest samples them; on every one the person tracker and the
object tracker run in turn, timed apart, so their costs are a ratio measured in one run. The
counts are what the object tracker found per kind: tracks (the kind settled over each track's
sightings, as ingest settles it; tracks seen fewer than `_MIN_SIGHTINGS` times left out, as
ingest's cleaning drops them) and the frames each kind was seen on. Nothing is written to a
library.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from backend.config import Settings
from backend.factory import ModelSet
from backend.ingest import decode
from models.objects import settle_kinds

_MIN_SIGHTINGS = 3


def objects_bench(paths: list[Path], settings: Settings, progress=lambda line: None) -> dict:
    models = ModelSet(settings)
    people, things = models.tracker, models.objects
    clips = []
    for path in paths:
        meta = decode.probe(path)
        people.reset()
        things.reset()
        seconds = {"people": 0.0, "objects": 0.0}
        found, frames_seen, n = [], Counter(), 0
        for _, _, frame in decode.iter_frames(path, meta, decode.sample_indices(meta, settings.track_fps)):
            mark = time.perf_counter()
            people.track(frame)
            seconds["people"] += time.perf_counter() - mark
            mark = time.perf_counter()
            detections = things.track(frame)
            seconds["objects"] += time.perf_counter() - mark
            found += detections
            frames_seen.update({d.category for d in detections})
            n += 1
        sightings = Counter(d.track_id for d in found)
        kinds = Counter(kind for track, kind in settle_kinds(found).items()
                        if sightings[track] >= _MIN_SIGHTINGS)
        clips.append({
            "video": path.name, "frames": n, "duration": round(meta.duration, 1),
            "people_ms_per_frame": round(1000 * seconds["people"] / max(n, 1), 1),
            "objects_ms_per_frame": round(1000 * seconds["objects"] / max(n, 1), 1),
            "objects_to_people": round(seconds["objects"] / max(seconds["people"], 1e-9), 2),
            "tracks_by_kind": dict(kinds.most_common()),
            "frames_by_kind": dict(frames_seen.most_common()),
        })
        progress(f"{path.name}: {clips[-1]['objects_ms_per_frame']} ms a frame, "
                 f"{dict(kinds.most_common(5))}")
    return {"detectors": {"people": people.name, "objects": things.name},
            "track_fps": settings.track_fps, "clips": clips}
