"""Whole-picture facts of a shot: colour or black and white, camera footage or animation, how
lit it is, indoors or outdoors.

Measured on a small thumbnail of the frames ingest tags (a few a shot), then decided once per
shot, so that "is this a black and white film?" or "is it indoors?" is a typed value code reads:
- colour: the median chroma (max minus min of R, G, B) of the frames' pixels; a black and white
  film stays under `GREY_CHROMA` (a sepia tint does not), colour footage far above it;
- footage: the share of pixels whose neighbourhood is perfectly flat (no sensor grain): drawn or
  rendered pictures are flat in large areas, camera footage almost nowhere;
- light: the median grey level, in the scenes table's steps (dark, dim, lit);
- place: votes from the kinds tracked in the shot (a bed, a sink: indoors; a bus, a horse:
  outdoors) and the tags (weighted by probability; a tag votes by its WordNet hypernyms:
  furniture, rooms and shops indoors, landforms and waters outdoors); no verdict without a
  clear majority.
The thresholds and their measured error are in docs/PERCEPTION.md ("Whole-picture facts").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from PIL import Image

GREY_CHROMA = 3.0        # median chroma (0-255) under which the picture has no colour
FLAT_SHARE = 0.45        # share of flat pixels from which a picture is drawn or rendered
DARK, DIM = 60.0, 100.0  # mean grey level steps, as the scenes table's brightness
_THUMB = (160, 90)

INDOOR_KINDS = {"couch", "bed", "dining table", "toilet", "tv", "laptop", "microwave", "oven",
                "toaster", "sink", "refrigerator", "book", "keyboard", "mouse", "remote",
                "hair drier", "toothbrush", "teddy bear", "vase", "wine glass", "cup", "fork",
                "knife", "spoon", "bowl"}
OUTDOOR_KINDS = {"car", "bus", "truck", "motorcycle", "bicycle", "airplane", "train", "boat",
                 "traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "horse",
                 "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "kite", "skis",
                 "snowboard", "surfboard", "bird"}
# A tag's hypernyms that place it, as WordNet 3.0 synsets (one sense each: 'vessel' the ship,
# not the bottle).
INDOOR_SYNSETS = ("furniture.n.01", "home_appliance.n.01", "room.n.01",
                  "mercantile_establishment.n.01", "kitchen_utensil.n.01", "tableware.n.01",
                  "bedclothes.n.01", "gymnastic_apparatus.n.01", "lamp.n.02")
OUTDOOR_SYNSETS = ("geological_formation.n.01", "body_of_water.n.01", "road.n.01",
                   "bridge.n.01", "wheeled_vehicle.n.01", "vessel.n.02", "aircraft.n.01",
                   "ungulate.n.01", "fence.n.01")
TAG_VOTE = 0.1           # a tag votes from this probability on, with its probability x 2


@dataclass(frozen=True)
class Measure:
    chroma: float
    flat: float
    luma: float


def measure(frame: np.ndarray) -> Measure:
    """One frame's chroma, flatness and grey level, on a thumbnail."""
    small = np.asarray(Image.fromarray(frame).resize(_THUMB, Image.Resampling.BILINEAR),
                       dtype=np.float32)
    chroma = float(np.median(small.max(axis=2) - small.min(axis=2)))
    grey = small.mean(axis=2)
    # Flat: the 3 x 3 neighbourhood varies by under a grey level; very dark or blown-out
    # pixels (black bars, a white sky) are flat in any footage and do not count.
    shifted = np.stack([grey[1 + dy:grey.shape[0] - 1 + dy, 1 + dx:grey.shape[1] - 1 + dx]
                        for dy in (-1, 0, 1) for dx in (-1, 0, 1)])
    spread = shifted.max(axis=0) - shifted.min(axis=0)
    centre = grey[1:-1, 1:-1]
    lit = (centre > 16) & (centre < 240)
    flat = float(((spread < 1.0) & lit).sum() / max(lit.sum(), 1))
    return Measure(chroma, flat, float(grey.mean()))


def shot_facts(measures: list[Measure], tags: list, kinds: set[str]) -> dict[str, str | None]:
    """{colour, footage, light, place} of a shot from its frames' measures, its tags (any
    objects with .wnid and .score, and .place for a place) and the kinds tracked in it."""
    if not measures:
        return {"colour": None, "footage": None, "light": None, "place": None}
    chroma = float(np.median([m.chroma for m in measures]))
    flat = float(np.median([m.flat for m in measures]))
    luma = float(np.median([m.luma for m in measures]))
    return {"colour": "black and white" if chroma < GREY_CHROMA else "colour",
            "footage": "animation" if flat >= FLAT_SHARE else "camera",
            "light": "dark" if luma < DARK else "dim" if luma < DIM else "lit",
            "place": place(tags, kinds)}


def place(tags: list, kinds: set[str]) -> str | None:
    """'indoors' or 'outdoors' where the votes are at least two to one, else None."""
    inside = float(len(kinds & INDOOR_KINDS))
    outside = float(len(kinds & OUTDOOR_KINDS))
    if tags:
        from models import lexicon

        indoor = {lexicon.synset_wnid(name) for name in INDOOR_SYNSETS}
        outdoor = {lexicon.synset_wnid(name) for name in OUTDOOR_SYNSETS}
        for tag in tags:
            if getattr(tag, "place", ""):
                # A place tag knows its side, and its weak guesses count too: they mostly
                # share the best one's side (chosen on the tuning half of the captioned images).
                inside += 2 * tag.score * (tag.place == "indoors")
                outside += 2 * tag.score * (tag.place == "outdoors")
                continue
            if tag.score < TAG_VOTE:
                continue
            broader = lexicon.broader_senses(tag.wnid) | {tag.wnid}
            inside += 2 * tag.score * bool(broader & indoor)
            outside += 2 * tag.score * bool(broader & outdoor)
    if inside >= 1 and inside >= 2 * outside:
        return "indoors"
    if outside >= 1 and outside >= 2 * inside:
        return "outdoors"
    return None


def with_facts(shots: list, measures: list[tuple[float, Measure]], tag_runs: list[tuple[float, list]],
               kinds_at: list[tuple[float, set[str]]]) -> list:
    """The shots (`scenes.Shot`) with their facts, from what was measured, tagged and tracked
    during each."""
    out = []
    for k, shot in enumerate(shots):
        last = k == len(shots) - 1
        within = [(t, found) for t, found in tag_runs if _during(t, shot, last)]
        tags = [tag for _, found in within for tag in found]
        kinds = {kind for t, found in kinds_at if _during(t, shot, last) for kind in found}
        frames = [m for t, m in measures if _during(t, shot, last)]
        out.append(replace(shot, **shot_facts(frames, tags, kinds)))
    return out


def _during(t: float, shot, last: bool) -> bool:
    return shot.t_start - 1e-6 <= t and (t < shot.t_end or last)


def tag_rows(tag_runs: list[tuple[float, list]], shots: list, duration: float,
             floor: float = 0.05, first_id: int = 1) -> list[dict]:
    """Rows of the tags table: each tagged frame's tags hold until the next tagged frame or the
    end of its shot; the same tag on consecutive frames is one interval at its best score."""
    cuts = sorted({s.t_end for s in shots} | {duration})
    rows: list[dict] = []
    open_rows: dict[str, dict] = {}
    for k, (t, found) in enumerate(tag_runs):
        nxt = tag_runs[k + 1][0] if k + 1 < len(tag_runs) else duration
        end = min([nxt, *[c for c in cuts if c > t]])
        seen = set()
        for tag in found:
            if tag.score < floor:
                continue
            seen.add(tag.label)
            row = open_rows.get(tag.label)
            if row is not None and abs(row["t_end"] - t) < 0.01:
                row["t_end"], row["score"] = round(end, 3), max(row["score"], round(tag.score, 3))
            else:
                row = {"t_start": round(t, 3), "t_end": round(end, 3), "tag": tag.label,
                       "wnid": tag.wnid, "score": round(tag.score, 3)}
                rows.append(row)
                open_rows[tag.label] = row
        for label in list(open_rows):
            if label not in seen:
                del open_rows[label]
    for i, row in enumerate(rows, start=first_id):
        row["id"] = i
    return rows
