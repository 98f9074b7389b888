"""Frames of a library video with their tracked boxes and ids drawn, for people to look at."""

from __future__ import annotations

import sqlite3

from PIL import Image, ImageDraw, ImageFont

from backend.ingest import decode
from backend.kinds import COCO
from backend.library import VideoEntry
from models.motion import CATEGORY as MOVING

# An evidence time farther than this from any sampled detection shows the plain video frame
# at that time (e.g. "the room is empty at 47 s") rather than a frame with boxes from elsewhere.
NEAREST_DETECTION_S = 0.5
_MOVING_COLOUR = "#6b7280"  # no kind: the grey of plain text
_PALETTE = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6",
            "#bfef45", "#fabed4", "#469990", "#dcbeff", "#9a6324", "#800000", "#aaffc3"]


def colour_for(instance_id: int) -> str:
    return _PALETTE[(instance_id - 1) % len(_PALETTE)]


def kind_colour(kind: str) -> str:
    """The same colour for a kind in every video: people first, then the COCO kinds in order."""
    if kind == MOVING:
        return _MOVING_COLOUR
    index = COCO.index(kind) if kind in COCO else sum(map(ord, kind))
    return _PALETTE[index % len(_PALETTE)]


def colours(instances: list[dict]) -> dict[int, str]:
    """{instance id: colour} for the boxes and bars of one video: by kind where it shows more
    than one (people, cars and bottles told apart at a glance), else by object."""
    by_kind = len({i["category"] for i in instances}) > 1
    return {i["id"]: kind_colour(i["category"]) if by_kind else colour_for(i["id"])
            for i in instances}


def _rows(entry: VideoEntry, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    conn = sqlite3.connect(f"{entry.db_path.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def key_frames(entry: VideoEntry, count: int = 4) -> list[int]:
    """Sampled frames spread over the video, preferring those where the most objects are seen."""
    rows = _rows(entry, "SELECT frame, COUNT(*) AS n FROM detections GROUP BY frame ORDER BY frame")
    if not rows:
        frames = entry.info()["frames"]
        return sorted({int(frames * (k + 0.5) / count) for k in range(count)})
    chunk = max(1, len(rows) // count)
    picks = []
    for start in range(0, len(rows), chunk):
        best = max(rows[start:start + chunk], key=lambda r: r["n"])
        picks.append(best["frame"])
    return picks[:count]


def frames_at_times(entry: VideoEntry, times: list[float], count: int = 4) -> list[int]:
    """Frame indices to show for evidence times: the sampled detection frame nearest each time,
    or the video frame at the time when nothing was tracked near it; key frames without times."""
    if not times:
        return key_frames(entry, count)
    video = _rows(entry, "SELECT fps, frames FROM video")[0]
    sampled = _rows(entry, "SELECT DISTINCT frame, t FROM detections ORDER BY frame")
    wanted = sorted(set(times))
    if len(wanted) > count:  # spread the picks over the evidence rather than the first few
        wanted = [wanted[round(k * (len(wanted) - 1) / (count - 1))] for k in range(count)] \
            if count > 1 else wanted[:1]
    picks: list[int] = []
    for t in wanted:
        nearest = min(sampled, key=lambda r: abs(r["t"] - t), default=None)
        if nearest is not None and abs(nearest["t"] - t) <= NEAREST_DETECTION_S:
            frame = nearest["frame"]
        else:
            frame = min(max(0, round(t * video["fps"])), max(0, video["frames"] - 1))
        if frame not in picks:
            picks.append(frame)
    return picks


def annotated_frames(entry: VideoEntry, frames: list[int],
                     highlight: set[int] | None = None) -> dict[int, Image.Image]:
    """{frame: image} with every detection in it drawn as a box labelled with its instance id,
    the `highlight` ids in thicker lines."""
    meta = decode.VideoMeta.from_row(dict(_rows(entry, "SELECT * FROM video")[0]))
    return {frame: _draw(entry, frame, Image.fromarray(pixels), highlight)
            for frame, pixels in decode.frames_at(entry.source, meta, frames).items()}


def annotated_frame(entry: VideoEntry, frame: int, highlight: set[int] | None = None) -> Image.Image:
    return annotated_frames(entry, [frame], highlight)[frame]


def _draw(entry: VideoEntry, frame: int, image: Image.Image, highlight: set[int] | None) -> Image.Image:
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=max(12, image.height // 30))
    colour_of = colours([dict(r) for r in _rows(entry, "SELECT id, category FROM instances")])
    for row in _rows(entry, "SELECT d.instance_id, d.x1, d.y1, d.x2, d.y2, i.category "
                            "FROM detections d JOIN instances i ON i.id = d.instance_id "
                            "WHERE d.frame = ?", (frame,)):
        colour = colour_of[row["instance_id"]]
        width = 4 if highlight and row["instance_id"] in highlight else 2
        draw.rectangle((row["x1"], row["y1"], row["x2"], row["y2"]), outline=colour, width=width)
        label = f"#{row['instance_id']} {row['category']}"
        left, top, right, bottom = draw.textbbox((row["x1"], row["y1"]), label, font=font)
        draw.rectangle((left, top - (bottom - top) - 2, right + 4, top), fill=colour)
        draw.text((row["x1"] + 2, top - (bottom - top) - 2), label, fill="white", font=font)
    return image
