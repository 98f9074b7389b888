"""How often each computed measurement is right on external truth: the table behind "high".

Every question of the external-only workload (`workload.make_external_workload`: the MOT
sequences and their footage variants) whose need a typed query computes is run as the agent's
tools run it, with no LLM: the computed value is right when it states the ground truth's option.
Counted per half of the workload, per kind of measurement (the query's operation) and per
condition the video shows (`precision.conditions`). Only the tuning half may be written to
`backend/agent/precision.TABLE`; the reporting half is printed beside it to show whether the
table holds on videos it was not made from.
"""

from __future__ import annotations

import csv
import json
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Callable

from backend.agent import precision
from backend.agent.options import option_for_value
from backend.agent.queries import TypedQuery, run
from backend.agent.video_tables import VideoTables
from backend.config import Settings
from backend.evaluation import workload

# workload need -> the typed operation the agent's tools answer it with (about people)
NEED_OPERATIONS = {"count_at": "in_view", "most_at_once": "most_at_once",
                   "count_distinct": "count_distinct", "direction": "movement",
                   "first_exit": "first_appearance", "last_arrival": "first_appearance"}


def measure(ground_truth: Path, settings: Settings, count: int = 400, seed: int = 0,
            progress: Callable[[str], None] = lambda line: None) -> dict:
    """{half: {operation: {conditions: {"right", "of", "videos_right", "videos"}}}} and the
    questions asked: questions right, and videos whose every question was right."""
    from backend.ingest.pipeline import ingest
    from backend.library import Library

    counts: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: {"right": 0, "of": 0})))
    per_video: dict = defaultdict(lambda: True)  # (half, operation, conditions, video): all right
    with tempfile.TemporaryDirectory(prefix="memoryreel-measurements-") as tmp:
        out = Path(tmp) / "workload.csv"
        workload.make_external_workload(ground_truth, out, settings, count=count, seed=seed)
        with open(out, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r["need"] in NEED_OPERATIONS]
        # People only: speech, text and moving objects change no person measurement.
        tracking_only = replace(settings, home=Path(tmp) / "library", asr_enabled=False,
                                ocr_enabled=False, motion_enabled=False)
        tables = {}
        for name in sorted({r["video"] for r in rows}):
            progress(f"ingesting {name}")
            entry = Library(tracking_only.home).get(
                ingest(out.parent / "videos" / name, tracking_only).video_id)
            tables[name] = VideoTables(entry.db_path, timeout_s=settings.sql_timeout_s,
                                       max_rows=100_000)
        for r in rows:
            operation = NEED_OPERATIONS[r["need"]]
            result = run(TypedQuery(operation=operation, target="person", time="", until="",
                                    words=""), r["question"], tables[r["video"]])
            if result.support != "computed":
                continue  # never a candidate for high
            conditions = tables[r["video"]].conditions
            cell = counts[r["half"]][operation][conditions]
            options = [r[f"a{i}"] for i in range(workload.N_OPTIONS)]
            right = option_for_value(result.value, options) == int(r["answer"])
            cell["of"] += 1
            cell["right"] += right
            key = (r["half"], operation, conditions, r["video"])
            per_video[key] = per_video[key] and right
    for (half, operation, conditions, _), right in per_video.items():
        cell = counts[half][operation][conditions]
        cell["videos"] = cell.get("videos", 0) + 1
        cell["videos_right"] = cell.get("videos_right", 0) + right
    return {"questions": len(rows), "halves": json.loads(json.dumps(counts))}


def write_table(halves: dict, target: Path = precision.TABLE) -> None:
    """The tuning half, as `precision.measured()` reads it."""
    target.write_text(json.dumps(halves.get("tune", {}), indent=1, sort_keys=True) + "\n")
