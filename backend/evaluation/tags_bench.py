"""`bench tags`: ImageNet taggers timed and checked against human captions, side by side.

No image set here has ImageNet labels, but COCO val2017 images come with five human captions
each (`captions.json` in the COCO truth folder). A tagger agrees on an image when one of its
top tags is, in WordNet, a sense of a caption's word or a kind of one: 'brown bear' agrees with
"a grizzly bear", 'ski' with "standing on skis". The tag's own synset is used, not every sense
of its label, so 'pole' (the rod) does not agree with "a person".
Seconds per frame are those of a whole `tags` call on one frame, preprocessing included.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

import numpy as np

COCO = "coco_val2017_first128"


def read_captions(truth_root: Path, limit: int | None = None) -> list[tuple[Path, list[str]]]:
    """(image, its captions) for the COCO images of the object truth, in name order."""
    folder = truth_root / COCO
    captions = json.loads((folder / "captions.json").read_text(encoding="utf-8"))
    return [(folder / "images" / name, captions[name]) for name in sorted(captions)][:limit]


def agrees(wnids: list[str], captions: list[str]) -> bool:
    from models import lexicon

    said = {sense for caption in captions for term in lexicon.terms(caption)
            for sense in lexicon.senses(term)}
    return any(said & ({wnid} | lexicon.broader_senses(wnid)) for wnid in wnids)


def tags_bench(images: list[tuple[Path, list[str]]], candidates: dict[str, Callable[[], object]],
               progress=lambda line: None) -> dict:
    """Per candidate: mean seconds a frame, and on how many images its top-1 and top-5 agree."""
    from PIL import Image

    frames = [(np.asarray(Image.open(path).convert("RGB")), captions) for path, captions in images]
    out = {}
    for name, build in candidates.items():
        tagger, seconds, top1, top5 = build(), 0.0, 0, 0
        for frame, captions in frames:
            started = time.perf_counter()
            wnids = [tag.wnid for tag in tagger.tags([frame], top=5)[0]]
            seconds += time.perf_counter() - started
            top1 += agrees(wnids[:1], captions)
            top5 += agrees(wnids, captions)
        out[name] = {"tagger": tagger.name, "images": len(frames),
                     "seconds_per_frame": round(seconds / max(len(frames), 1), 4),
                     "top1_agrees": top1, "top5_agrees": top5}
        progress(f"{name}: {out[name]}")
    return {"candidates": out}


def table(payload: dict) -> str:
    rows = ["| tagger | s / frame (1 thread) | top-1 agrees | top-5 agrees |", "|---|---|---|---|"]
    for c in payload["candidates"].values():
        rows.append(f"| {c['tagger']} | {c['seconds_per_frame']:.3f} | {c['top1_agrees']} / "
                    f"{c['images']} | {c['top5_agrees']} / {c['images']} |")
    return "\n".join(rows)
