"""`bench detectors`: COCO object detectors scored kind by kind on images with real boxes.

Each candidate runs on every image of the object truth (`../shared/images/objects-truth`: COCO
val2017 images, cars seen from straight above, indoor rooms; YOLO label files) at ingest's
confidence threshold, timed per image, side by side in one run. A detection is right when it
overlaps an unmatched true box of its kind by IoU >= 0.5 (greedy, surest first); per kind the
precision and recall come with the box counts behind them. Cars from above are scored on their
own, with car, truck and bus merged (the set labels every vehicle a car).
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Callable

import numpy as np

from backend.agent import precision
from backend.errors import InputError

IOU = 0.5
SETS = ("coco_val2017_first128", "indoor_cartucho_map", "drone_vehicles_cats_madison")
_ABOVE = "drone_vehicles_cats_madison"
_VEHICLES = ("car", "truck", "bus")


def read_set(folder: Path, limit: int | None = None) -> list[tuple[Path, list[tuple[str, np.ndarray]]]]:
    """(image, [(kind, box in normalised x1, y1, x2, y2)]) for the images of one truth set."""
    classes = (folder / "classes.txt").read_text(encoding="utf-8").split("\n")
    images = sorted(p for p in (folder / "images").iterdir()
                    if p.suffix.lower() in (".jpg", ".jpeg", ".png"))[:limit]
    out = []
    for image in images:
        label = folder / "labels" / f"{image.stem}.txt"
        boxes = []
        for line in label.read_text(encoding="utf-8").splitlines() if label.is_file() else []:
            parts = line.split()
            if len(parts) == 5:
                c, cx, cy, w, h = int(parts[0]), *map(float, parts[1:])
                boxes.append((classes[c].strip(), np.array([cx - w / 2, cy - h / 2,
                                                            cx + w / 2, cy + h / 2])))
        out.append((image, boxes))
    return out


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def size_of(box: np.ndarray, pixels: tuple[float, float]) -> str:
    """COCO's size class of a normalised box seen at `pixels` (width, height)."""
    return precision.size_class((box[2] - box[0]) * pixels[0] * (box[3] - box[1]) * pixels[1])


def _count(tally: dict, kind: str, size: str, figure: str) -> None:
    tally[kind][figure] += 1
    sizes = tally[kind].setdefault("sizes", {})
    sizes.setdefault(size, {"tp": 0, "fp": 0, "fn": 0, "boxes": 0})[figure] += 1


def score_image(truth: list[tuple[str, np.ndarray]], found: list[tuple[str, float, np.ndarray]],
                tally: dict, merge: dict[str, str] | None = None,
                pixels: tuple[float, float] = (precision.REFERENCE, precision.REFERENCE)) -> None:
    """Add one image's true positives, false positives and misses per kind to `tally`, also
    per size class at `pixels` (a detection by its own box's size, a miss by the true box's)."""
    merge = merge or {}
    truth = [(merge.get(k, k), b) for k, b in truth]
    found = sorted(((merge.get(k, k), s, b) for k, s, b in found), key=lambda f: -f[1])
    used: set[int] = set()
    for kind, _, box in found:
        best, at = 0.0, None
        for i, (k, b) in enumerate(truth):
            if k == kind and i not in used and (iou := _iou(box, b)) > best:
                best, at = iou, i
        if at is not None and best >= IOU:
            used.add(at)
        _count(tally, kind, size_of(box, pixels), "tp" if at is not None and best >= IOU else "fp")
    for i, (k, b) in enumerate(truth):
        _count(tally, k, size_of(b, pixels), "boxes")
        if i not in used:
            _count(tally, k, size_of(b, pixels), "fn")


def _figures(tally: dict) -> dict:
    out = {}
    for kind, t in sorted(tally.items()):
        out[kind] = _rates(t)
        out[kind]["sizes"] = {size: _rates(f) for size, f in sorted(t.get("sizes", {}).items())}
    return out


def _rates(t: dict) -> dict:
    said = t["tp"] + t["fp"]
    return {"boxes": t["boxes"], "found": said, "right": t["tp"],
            "precision": round(t["tp"] / said, 3) if said else None,
            "recall": round(t["tp"] / t["boxes"], 3) if t["boxes"] else None}


def _summary(kinds: dict) -> dict:
    """Mean recall over kinds with boxes, and the same over kinds found at precision >= 0.5."""
    with_boxes = [f for f in kinds.values() if f["boxes"]]
    recalls = [f["recall"] for f in with_boxes]
    precise = [f["recall"] if (f["precision"] or 0) >= 0.5 else 0.0 for f in with_boxes]
    return {"kinds": len(with_boxes), "mean_recall": round(float(np.mean(recalls)), 3) if recalls
            else None, "mean_recall_at_precision_0.5": round(float(np.mean(precise)), 3)
            if precise else None}


def detectors_bench(truth_root: Path, candidates: dict[str, Callable[[], object]], conf: float,
                    limit: int | None = None, progress=lambda line: None) -> dict:
    """Every candidate (name -> a function building an object with `detect(rgb, conf)`) on every
    truth set: per-kind figures, a summary, and milliseconds per image."""
    from PIL import Image

    from models.coco import CLASSES

    sets = {name: read_set(truth_root / name, limit) for name in SETS
            if (truth_root / name / "images").is_dir()}
    if not sets:
        raise InputError(f"No object truth under {truth_root} (expected {', '.join(SETS)}).")
    results = {}
    for name, build in candidates.items():
        detector = build()
        by_set, seconds, images = {}, 0.0, 0
        for set_name, items in sets.items():
            tally: dict = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "boxes": 0})
            merge = {k: "car" for k in _VEHICLES} if set_name == _ABOVE else {}
            for image, truth in items:
                rgb = np.asarray(Image.open(image).convert("RGB"))
                h, w = rgb.shape[:2]
                started = time.perf_counter()
                boxes, scores, classes = detector.detect(rgb, conf)
                seconds += time.perf_counter() - started
                images += 1
                found = [(CLASSES[int(c)], float(s), np.asarray(b) / [w, h, w, h])
                         for b, s, c in zip(boxes, scores, classes)]
                if set_name == _ABOVE:  # only vehicles are labelled there
                    found = [f for f in found if f[0] in _VEHICLES]
                # Sizes at the detector's input, as ingest sees a video's objects.
                scale = precision.REFERENCE / max(w, h)
                score_image(truth, found, tally, merge, (w * scale, h * scale))
            kinds = _figures(tally)
            by_set[set_name] = {"images": len(items), "kinds": kinds, "summary": _summary(kinds)}
            progress(f"{name} on {set_name}: {by_set[set_name]['summary']}")
        results[name] = {"detector": getattr(detector, "name", name),
                         "ms_per_image": round(1000 * seconds / max(images, 1), 1),
                         "sets": by_set}
    return {"conf": conf, "iou": IOU, "candidates": results}


def table(payload: dict) -> str:
    """The figures as markdown: a summary row per candidate and set, then kind by kind."""
    names = list(payload["candidates"])
    lines = ["| set | figure | " + " | ".join(names) + " |", "|---|---|" + "---:|" * len(names)]
    first = payload["candidates"][names[0]]["sets"]
    for set_name in first:
        for figure in ("mean_recall", "mean_recall_at_precision_0.5"):
            cells = [str(payload["candidates"][n]["sets"][set_name]["summary"][figure])
                     for n in names]
            lines.append(f"| {set_name} | {figure} | " + " | ".join(cells) + " |")
    lines.append("| all | ms per image | " + " | ".join(
        str(payload["candidates"][n]["ms_per_image"]) for n in names) + " |")
    lines += ["", "Kind by kind (precision / recall, boxes), COCO val2017 and cars from above:", "",
              "| set | kind | boxes | " + " | ".join(names) + " |",
              "|---|---|---:|" + "---|" * len(names)]
    for set_name in (s for s in ("coco_val2017_first128", _ABOVE) if s in first):
        for kind, f in first[set_name]["kinds"].items():
            if not f["boxes"]:
                continue
            cells = []
            for n in names:
                g = payload["candidates"][n]["sets"][set_name]["kinds"].get(kind) or {}
                cells.append(f"{g.get('precision')} / {g.get('recall')}")
            lines.append(f"| {set_name} | {kind} | {f['boxes']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


_PRECISION_SET = "coco_val2017_first128"  # the one set whose every object is labelled


def precision_table(payload: dict, candidate: str) -> dict:
    """The candidate's precision per kind and size on COCO val2017, as the confidence contract
    reads it (backend/agent/precision.py, `object_measured`)."""
    run = payload["candidates"][candidate]
    kinds = run["sets"][_PRECISION_SET]["kinds"]
    return {"detector": run["detector"],
            "source": f"COCO val2017 images ({run['sets'][_PRECISION_SET]['images']}, "
                      f"confidence >= {payload['conf']}, IoU >= {payload['iou']})",
            "kinds": {kind: {size: {"right": f["right"], "of": f["found"]}
                             for size, f in figures["sizes"].items() if f["found"]}
                      for kind, figures in kinds.items() if figures["found"]}}


def kinds_table(table: dict, every_kind: tuple[str, ...]) -> str:
    """Which kinds can be asked about, and how far an answer naming each can be trusted, from a
    precision table: markdown for docs/PERCEPTION.md."""
    rows: dict[str, list[str]] = {"high": [], "medium": [], "low": [],
                                  "unmeasured": sorted(set(every_kind) - set(table["kinds"]))}
    for kind, sizes in sorted(table["kinds"].items()):
        right = sum(c["right"] for c in sizes.values())
        said = sum(c["of"] for c in sizes.values())
        trusted = [size for size, c in sizes.items() if precision.precise_kind(c)]
        entry = f"{kind} ({right}/{said}{'; high when ' + ', '.join(trusted) if trusted else ''})"
        rows["high" if trusted else "medium" if said and right / said >= 0.5 else "low"].append(entry)
    words = {"high": f"right >= {precision.HIGH_PRECISION:.0%} on >= {precision.MIN_BOXES} "
                     "detections at some size: can be answered with high confidence",
             "medium": "right at least half the time: answered, never high",
             "low": "right less than half the time: answered, low in practice",
             "unmeasured": "never named on these images: answered, never high"}
    lines = [f"Measured for {table['detector']} on {table['source']}; right/said per kind.", "",
             "| how far | kinds |", "|---|---|"]
    lines += [f"| {words[level]} | {', '.join(kinds) or '(none)'} |" for level, kinds in rows.items()]
    return "\n".join(lines)
