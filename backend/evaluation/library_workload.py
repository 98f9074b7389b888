"""Library questions with truth from the tables (`workload --library`): which videos show a kind
of thing, N people at once, or say or show a word, asked across every video in the library and
scored on the videos the answer names.

The truth is read with SQL of its own, not through the typed queries the answer uses, so a
video named wrongly by the library scope's plumbing (a kind mapped wrong, a count compared the
wrong way, a word found in the wrong video) shows as a wrong video.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path
from typing import Callable

import sqlite_utils

from backend import kinds
from backend.agent.library_tool import META
from backend.config import Settings
from backend.library import Library, VideoEntry
from models.keywords import keywords

_ABSENT = ("giraffe", "boat", "horse", "airplane", "umbrella", "laptop", "dog")
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
MAX_AT_ONCE = len(_NUMBER_WORDS) - 1  # "which clips show nine cars at once" at most


def questions(videos: list[VideoEntry], seed: int = 0, per_kind: int = 3) -> list[dict]:
    """Questions with the ids of the videos that truly hold the answer."""
    rng = random.Random(seed)
    facts = {v.video_id: _facts(v) for v in videos}
    out = []
    present = sorted({k for f in facts.values() for k in f["kinds"]} - {"moving object"})
    for kind in present + [k for k in _ABSENT if k not in present][:per_kind]:
        out.append(_question(f"In which clip is there a {kind}?",
                             [v for v, f in facts.items() if kind in f["kinds"]], "kind"))
    for category in sorted({c for f in facts.values() for c in f["at_once"]} - {"moving object"}):
        most = max(f["at_once"].get(category, 0) for f in facts.values())
        noun = kinds.plural(category)
        for n in range(2, min(most + 1, MAX_AT_ONCE) + 1):
            out.append(_question(f"Which clips show {_NUMBER_WORDS[n]} {noun} at once?",
                                 [v for v, f in facts.items() if f["at_once"].get(category, 0) >= n],
                                 "at once"))
    for f in facts.values():
        # A word that names a kind of thing is a question about that kind, not about speech.
        # ... and one that names videos ("which video") is not asked about at all.
        said = sorted(w for w in f["said"] if len(w) >= 5 and w.isalpha() and not kinds.named(w)
                      and not META.fullmatch(w))
        for word in rng.sample(said, min(per_kind, len(said))):
            out.append(_question(f"Which clip mentions {word}?",
                                 [v for v, g in facts.items() if word in g["said"]], "speech"))
    return out


def _question(text: str, truth: list[str], need: str) -> dict:
    return {"question": text, "truth": sorted(truth), "need": need}


def _facts(video: VideoEntry) -> dict:
    db = sqlite_utils.Database(video.db_path)
    try:
        categories = {r["category"] for r in db.query("SELECT DISTINCT category FROM instances")}
        at_once = {r["category"]: r["n"] for r in db.query(
            "SELECT category, MAX(n) AS n FROM (SELECT i.category, COUNT(DISTINCT d.instance_id) "
            "AS n FROM detections d JOIN instances i ON i.id = d.instance_id "
            "GROUP BY i.category, d.frame) GROUP BY category")}
        said = {w for r in db.query("SELECT text FROM speech") for w in keywords(r["text"] or "")}
    finally:
        db.close()
    # A kind is there when the detector reported it under any of the kinds it is reported as.
    held = {k for k in [*kinds.words().values()] if set(kinds.detected_as(k)) & categories}
    return {"kinds": held | categories, "at_once": at_once, "said": said}


def run(settings: Settings, out: Path, seed: int = 0,
        answer: Callable[[str], list[str]] | None = None,
        progress: Callable[[str], None] = lambda q: None) -> dict:
    """Ask every generated question across the library; write question, truth and the videos
    named to `out` (CSV) and return the totals."""
    from backend.ask_library import ask_library

    videos = Library(settings.home).list()
    if answer is None:
        def answer(question: str) -> list[str]:
            return [v["video_id"] for v in ask_library(question, settings).videos]
    rows, wrong, missed, right = [], 0, 0, 0
    for q in questions(videos, seed):
        progress(q["question"])
        named = answer(q["question"])
        bad = sorted(set(named) - set(q["truth"]))
        lost = sorted(set(q["truth"]) - set(named))
        wrong += len(bad)
        missed += len(lost)
        right += not bad and not lost
        rows.append({**q, "truth": " ".join(q["truth"]), "named": " ".join(named),
                     "wrong": " ".join(bad), "missed": " ".join(lost)})
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["question", "need", "truth", "named", "wrong", "missed"])
        writer.writeheader()
        writer.writerows(rows)
    needs = {}
    for row in rows:
        need = needs.setdefault(row["need"], {"questions": 0, "right": 0})
        need["questions"] += 1
        need["right"] += not row["wrong"] and not row["missed"]
    return {"out": str(out), "videos": len(videos), "questions": len(rows), "right": right,
            "wrong_videos_named": wrong, "videos_missed": missed, "needs": needs}

