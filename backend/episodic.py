"""Episodic memory: one vector row per segment per temporal scale, in LanceDB.

Scales follow WorldMM's ladder (30 s / 3 min / 10 min / 1 h) scaled to the video: the fine
time step, then windows five times longer each, up to one window covering the whole video.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa

TABLE = "episodic"
_GROWTH = 5


@dataclass(frozen=True)
class Episode:
    scale: str          # 'fine', '10s', '50s', ... or 'video'
    scale_seconds: float
    t_start: float
    t_end: float
    text: str
    instance_ids: list[int]


def scale_windows(duration: float, fine_seconds: float) -> list[tuple[str, float]]:
    """Coarser windows for a video: (name, seconds), ending with the whole video."""
    windows, seconds = [], fine_seconds * _GROWTH
    while seconds < duration:
        windows.append((f"{seconds:g}s", seconds))
        seconds *= _GROWTH
    windows.append(("video", duration))
    return windows


def _schema(dim: int) -> pa.Schema:
    return pa.schema([
        pa.field("video_id", pa.string()),
        pa.field("scale", pa.string()),
        pa.field("scale_seconds", pa.float64()),
        pa.field("t_start", pa.float64()),
        pa.field("t_end", pa.float64()),
        pa.field("text", pa.string()),
        pa.field("instance_ids", pa.list_(pa.int64())),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


def write(folder: Path, video_id: str, episodes: list[Episode], vectors: np.ndarray) -> int:
    db = lancedb.connect(str(folder / "memory.lance"))
    table = db.create_table(TABLE, schema=_schema(vectors.shape[1]), mode="overwrite")
    table.add([{
        "video_id": video_id, "scale": e.scale, "scale_seconds": e.scale_seconds,
        "t_start": e.t_start, "t_end": e.t_end, "text": e.text, "instance_ids": e.instance_ids,
        "vector": v.astype(np.float32),
    } for e, v in zip(episodes, vectors)])
    return table.count_rows()


def _open(folder: Path):
    return lancedb.connect(str(folder / "memory.lance")).open_table(TABLE)


def count_by_scale(folder: Path) -> dict[str, int]:
    names = _open(folder).to_arrow().column("scale").to_pylist()
    return {s: names.count(s) for s in dict.fromkeys(names)}


def scales(folder: Path) -> list[str]:
    """Scale names of a video, finest first."""
    return list(count_by_scale(folder))


def rows(folder: Path) -> list[dict]:
    """Every episode of a video without its vector, in stored order."""
    return _open(folder).to_arrow().drop_columns(["vector"]).to_pylist()


def search(folder: Path, query_vector: np.ndarray, *, scale: str | None = None,
           k: int = 5) -> list[dict]:
    """Nearest episodes by cosine similarity, optionally at one scale; adds 'similarity'."""
    query = _open(folder).search(query_vector.astype(np.float32)).metric("cosine").limit(k)
    if scale:
        query = query.where(f"scale = '{scale.replace(chr(39), '')}'", prefilter=True)
    hits = query.to_list()
    for hit in hits:
        hit["similarity"] = 1.0 - hit.pop("_distance")
        hit.pop("vector", None)
    return hits
