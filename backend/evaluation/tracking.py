"""Tracking measured against MOTChallenge ground truth.

Every answer about people rests on the tracks, so this scores what the answers see: the
`detections` table ingest wrote (after track cleaning), at the frames the tracker was given.
Two kinds of figure: the standard MOT metrics from py-motmetrics (MOTA, IDF1, ID switches,
precision, recall), and the ones questions depend on (people in view per frame, the most at
once, how many different people).

A sequence is a MOT-layout folder (`gt.txt` or `gt/gt.txt`, `seqinfo.ini`) with its video
either inside it or in the folder above its parent (`videos/ground-truth/NAME/` beside
`videos/*NAME.mp4`, as ../shared/videos holds them).
"""

from __future__ import annotations

import configparser
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import motmetrics
import numpy as np

from backend.agent.precision import estimate
from backend.errors import InputError
from backend.ingest.describe import TrackPoint, motion
from backend.ingest.tracks import CROWD
from backend.library import VIDEO_EXTENSIONS

Box = tuple[float, float, float, float]  # x1, y1, x2, y2 in pixels
# frame index from 0 -> [(identity, box)]
Boxes = dict[int, list[tuple[int, Box]]]

_MIN_IOU = 0.5  # the MOTChallenge match threshold


@dataclass(frozen=True)
class Sequence:
    name: str
    video: Path
    gt: Path
    fps: float  # the ground truth's frame rate


def find_sequences(root: Path) -> list[Sequence]:
    """Every MOT-layout sequence below `root` (a ground-truth folder), by name."""
    folders = sorted({p.parent.parent if p.parent.name == "gt" else p.parent
                      for p in Path(root).rglob("gt.txt")})
    return [sequence_at(folder) for folder in folders]


def sequence_at(folder: Path) -> Sequence:
    folder = Path(folder)
    gt = next((p for p in (folder / "gt.txt", folder / "gt" / "gt.txt") if p.is_file()), None)
    if gt is None:
        raise InputError(f"'{folder}' has no gt.txt (MOTChallenge layout: gt.txt or gt/gt.txt).")
    info = configparser.ConfigParser()
    info.read(folder / "seqinfo.ini")
    name = info.get("Sequence", "name", fallback=folder.name)
    fps = info.getfloat("Sequence", "frameRate", fallback=0.0)
    if fps <= 0:
        raise InputError(f"'{folder / 'seqinfo.ini'}' gives no frameRate for {name}.")
    return Sequence(name=name, video=_video_for(folder, name), gt=gt, fps=fps)


def _video_for(folder: Path, name: str) -> Path:
    def matches(p: Path) -> bool:
        return p.suffix.lower() in VIDEO_EXTENSIONS and (
            p.stem == name or p.stem.endswith((f"_{name}", f"-{name}")))

    for place in (folder, folder.parent.parent):
        found = sorted(p for p in place.iterdir() if p.is_file() and matches(p))
        if found:
            return found[0]
    raise InputError(f"No video for sequence {name}: put NAME.mp4 in '{folder}' or "
                     f"'*_{name}.mp4' in '{folder.parent.parent}'.")


# MOT16 and later classes that are people: a pedestrian, a person on a vehicle, a static person.
# Distractors (8) and reflections (12) are not.
PERSON_CLASSES = {1, 2, 7}


def _truth_rows(sequence: Sequence):
    """(frame index from 0, identity, box, in view) for every person row of gt.txt
    (frames from 1).

    The product's rule, the same for every sequence: a person is in view when any part of them is
    visible in the frame. MOT16 rows (`frame, id, x, y, w, h, consider, class, visibility`) give a
    class and a visibility: people of PERSON_CLASSES with visibility > 0 are in view whatever
    their `consider` flag (a seated person is in view). MOT15 rows (`frame, id, x, y, w, h, conf,
    world x, y, z`: ten cells) and head points (Mall, the same layout) are all people, all in
    view, except rows marked conf 0."""
    for line in sequence.gt.read_text().splitlines():
        cells = line.split(",")
        if len(cells) < 7:
            continue
        if len(cells) == 9:
            person = int(float(cells[7])) in PERSON_CLASSES
            in_view = person and float(cells[8]) > 0
        else:
            person = in_view = float(cells[6]) != 0
        if not person:
            continue
        frame, identity = int(float(cells[0])), int(float(cells[1]))
        x, y, w, h = (float(c) for c in cells[2:6])
        yield frame - 1, identity, (x, y, x + w, y + h), in_view


def read_ground_truth(sequence: Sequence) -> Boxes:
    """The people in view (`_truth_rows`' rule), by frame index from 0."""
    truth: Boxes = defaultdict(list)
    for frame, identity, box, in_view in _truth_rows(sequence):
        if in_view:
            truth[frame].append((identity, box))
    return truth


def true_identities(sequence: Sequence) -> set[int] | None:
    """Every person's identity, hidden ones included (the distinct count includes someone who
    walks behind others all along); None where the truth has no identities (head points, all -1)."""
    identities = {identity for _, identity, _, _ in _truth_rows(sequence)}
    return None if identities <= {-1} else identities


def has_boxes(truth: Boxes) -> bool:
    """Whether the truth is boxes rather than points (Mall marks heads): only boxes can be matched."""
    return any(b[2] > b[0] and b[3] > b[1] for rows in truth.values() for _, b in rows)


def tracked_people(rows: list[dict]) -> Boxes:
    """Rows of `detections` joined to person instances (frame, instance_id, x1, y1, x2, y2)."""
    tracked: Boxes = defaultdict(list)
    for r in rows:
        tracked[r["frame"]].append((r["instance_id"], (r["x1"], r["y1"], r["x2"], r["y2"])))
    return tracked


def _distances(truth: list[tuple[int, Box]], tracked: list[tuple[int, Box]]) -> np.ndarray:
    """1 - IoU for every (truth, tracked) pair, NaN where they cannot match."""
    if not truth or not tracked:
        return np.empty((len(truth), len(tracked)))
    a = np.array([b for _, b in truth], dtype=float)[:, None, :]
    b = np.array([b for _, b in tracked], dtype=float)[None, :, :]
    inter = (np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
             * np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None))
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    iou = inter / np.maximum(area(a) + area(b) - inter, 1e-9)
    return np.where(iou >= _MIN_IOU, 1 - iou, np.nan)


SMALL_PERSON_PX = 64


def score(truth: Boxes, tracked: Boxes, frames: list[tuple[int, int]],
          frame_size: tuple[int, int] | None = None, identities: set[int] | None = None) -> dict:
    """Metrics over `frames`, pairs of (ground-truth frame index, tracked frame index): the
    frames the tracker saw, mapped onto the ground truth's numbering by time. With the frame's
    (width, height), also how often a track's direction of motion is the true one; with every
    true identity (`true_identities`), how far the number of tracks is from it (what the
    `count_distinct` query answers). Truth of points (heads) is scored on counts only. The
    per-frame counts (true, seen) are kept for `crowd_factor` and `estimated_relative`."""
    counts = [(len(truth.get(gt_frame, [])), len(tracked.get(frame, []))) for gt_frame, frame in frames]
    errors = np.array([seen - real for real, seen in counts], dtype=float)
    tracks = {i for rows in tracked.values() for i, _ in rows}
    figures = {
        "frames_scored": len(frames),
        "count_mae": round(float(np.abs(errors).mean()), 3) if len(errors) else None,
        "count_bias": round(float(errors.mean()), 3) if len(errors) else None,
        "within_one": round(float((np.abs(errors) <= 1).mean()), 3) if len(errors) else None,
        "count_relative": _relative(counts),
        "counts": counts,
        "max_at_once": max((seen for _, seen in counts), default=0),
        "true_max_at_once": max((r for r, _ in counts), default=0),
        "tracks": len(tracks),
        "identities": len(identities) if identities is not None else None,
        "distinct_error": len(tracks) - len(identities) if identities is not None else None,
        "tracks_per_identity": (round(len(tracks) / max(1, len(identities)), 3)
                                if identities is not None else None),
    }
    if not has_boxes(truth):
        return {**figures, **dict.fromkeys(_BOX_FIGURES)}
    return {**figures, **_box_figures(truth, tracked, frames, frame_size)}


def _relative(counts: list[tuple[int, int]]) -> float | None:
    """The summed count error as a share of the summed true count, over frames with anyone in
    view ("about 34" when 36 are there is 6 % off)."""
    there = [(r, seen) for r, seen in counts if r > 0]
    if not there:
        return None
    return round(sum(abs(seen - r) for r, seen in there) / sum(r for r, _ in there), 3)


def crowd_factor(runs: list[dict]) -> dict:
    """People there per person seen, over every frame of the runs (`score`'s
    figures, with "sequence") that saw a crowd (more than CROWD at once): {"factor", "frames",
    "seen", "true", "scenes"}."""
    crowds = [run for run in runs if run["max_at_once"] > CROWD]
    seen = sum(s for run in crowds for _, s in run["counts"])
    true = sum(r for run in crowds for r, _ in run["counts"])
    return {"factor": round(true / seen, 3) if seen else None,
            "frames": sum(len(run["counts"]) for run in crowds), "seen": seen, "true": true,
            "scenes": sorted(run["sequence"] for run in crowds)}


def estimated_relative(run: dict, factor: float | None) -> float | None:
    """`_relative` of a run's counts as answers give them: scaled by the factor in a crowd."""
    scale = factor if run["max_at_once"] > CROWD else None
    return _relative([(r, estimate(seen, scale)) for r, seen in run["counts"]])


_BOX_FIGURES = ("mota", "idf1", "mean_iou", "id_switches", "fragmentations", "precision", "recall",
                "small_recall", "direction_right")


def _box_figures(truth: Boxes, tracked: Boxes, frames: list[tuple[int, int]],
                 frame_size: tuple[int, int] | None) -> dict:
    accumulator = motmetrics.MOTAccumulator(auto_id=True)
    pairs: dict[int, list[tuple[int, int, Box, Box]]] = defaultdict(list)
    small_total = small_found = 0
    for gt_frame, frame in frames:
        here, seen = truth.get(gt_frame, []), tracked.get(frame, [])
        distances = _distances(here, seen)
        accumulator.update([i for i, _ in here], [i for i, _ in seen], distances)
        small = {i for i, b in here if b[3] - b[1] < SMALL_PERSON_PX}
        small_total += len(small)
        found = set()
        for (gt_id, gt_box), (track_id, box) in _best_matches(here, seen, distances):
            pairs[track_id].append((frame, gt_id, gt_box, box))
            found.add(gt_id)
        small_found += len(small & found)
    names = ["mota", "motp", "idf1", "num_switches", "num_fragmentations", "precision", "recall"]
    summary = motmetrics.metrics.create().compute(accumulator, metrics=names, name="run")
    metric = {name: float(summary[name].iloc[0]) for name in names}
    return {
        "mota": round(metric["mota"], 3), "idf1": round(metric["idf1"], 3),
        # motmetrics' MOTP is the mean 1 - IoU of matches; the IoU reads more plainly.
        "mean_iou": round(1 - metric["motp"], 3) if not np.isnan(metric["motp"]) else None,
        "id_switches": int(metric["num_switches"]),
        "fragmentations": int(metric["num_fragmentations"]),
        "precision": round(metric["precision"], 3), "recall": round(metric["recall"], 3),
        # Of true boxes under SMALL_PERSON_PX tall, the share a tracked box overlaps best.
        "small_recall": round(small_found / small_total, 3) if small_total else None,
        "direction_right": _direction_right(pairs, frame_size) if frame_size else None,
    }


def _best_matches(truth: list[tuple[int, Box]], tracked: list[tuple[int, Box]],
                  distances: np.ndarray):
    """(truth, tracked) pairs, each tracked box with the true box it overlaps most (IoU >= 0.5)."""
    for j, seen in enumerate(tracked):
        column = distances[:, j] if len(truth) else np.empty(0)
        if column.size and not np.all(np.isnan(column)):
            yield truth[int(np.nanargmin(column))], seen


def _direction_right(pairs: dict, frame_size: tuple[int, int]) -> float | None:
    """The share of tracks whose direction of motion, as the answers phrase it
    (`describe.motion`), is the one the true boxes give over the same frames. Each track is
    judged against the identity it covers most; tracks matched at fewer than two frames are
    left out."""
    width, height = frame_size

    def phrase(boxes: list[tuple[int, Box]]) -> str:
        points = [TrackPoint(t=frame, cx=(b[0] + b[2]) / 2 / width, cy=(b[1] + b[3]) / 2 / height,
                             h=(b[3] - b[1]) / height, w=(b[2] - b[0]) / width) for frame, b in boxes]
        return motion(points).split(" and ")[0]

    judged = right = 0
    for matches in pairs.values():
        identities = [gt_id for _, gt_id, _, _ in matches]
        main = max(set(identities), key=identities.count)
        mine = [(f, gt_box, box) for f, gt_id, gt_box, box in matches if gt_id == main]
        if len(mine) < 2:
            continue
        judged += 1
        right += phrase([(f, b) for f, _, b in mine]) == phrase([(f, g) for f, g, _ in mine])
    return round(right / judged, 3) if judged else None
