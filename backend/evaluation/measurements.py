"""How often each computed measurement is right on external truth: the table behind "high".

Every question of the external-only workload (`workload.make_external_workload`: the MOT
sequences and their footage variants) whose need a typed query computes is run as the agent's
tools run it, with no LLM: the computed value is right when it states the ground truth's option.
Counted per half of the workload (halves are made of whole scenes), per kind of measurement (the
query's operation), per condition the video shows (`precision.conditions`) and per scene, with
the scene bootstrap's lower bound (`precision.lower_bound`). Only the tuning half may be written
to `backend/agent/precision.TABLE`; the reporting half is printed beside it to show whether the
table holds on scenes it was not made from.
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
from backend.agent.queries import COUNTS, TypedQuery, run
from backend.agent.video_tables import VideoTables
from backend.config import Settings
from backend.evaluation import workload

# workload need -> the typed operation the agent's tools answer it with (about people)
NEED_OPERATIONS = {"count_at": "in_view", "most_at_once": "most_at_once",
                   "count_distinct": "count_distinct", "direction": "movement",
                   "first_exit": "first_appearance", "last_arrival": "first_appearance"}


def measure(sequences: list, settings: Settings, count: int = 400, seed: int = 0,
            progress: Callable[[str], None] = lambda line: None,
            variants: tuple | None = None) -> dict:
    """{"questions", "halves": {half: {operation: {conditions: {"right", "of", "scenes":
    {scene: {"right", "of"}}, "lower"}}}}} over the scenes' workload."""
    from backend.ingest.pipeline import ingest
    from backend.library import Library

    counts: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(
        lambda: defaultdict(lambda: {"right": 0, "of": 0}))))
    with tempfile.TemporaryDirectory(prefix="memoryreel-measurements-") as tmp:
        out = Path(tmp) / "workload.csv"
        workload.make_external_workload(sequences, out, settings, count=count, seed=seed,
                                        variants=variants)
        with open(out, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r["need"] in NEED_OPERATIONS]
        # People only: speech, text and moving objects change no person measurement.
        tracking_only = replace(settings, home=Path(tmp) / "library", asr_enabled=False,
                                ocr_enabled=False, motion_enabled=False, objects_enabled=False)
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
            scene = counts[r["half"]][operation][tables[r["video"]].conditions][r["scene"]]
            options = [r[f"a{i}"] for i in range(workload.N_OPTIONS)]
            scene["of"] += 1
            scene["right"] += option_for_value(result.value, options) == int(r["answer"])
            true = options[int(r["answer"])]
            if operation in COUNTS and true.isdigit() and int(true) and result.value.isdigit():
                scene["counted"] = scene.get("counted", 0) + 1
                scene["off"] = scene.get("off", 0) + abs(int(result.value) - int(true)) / int(true)
    halves = {half: {operation: {conditions: _cell(scenes) for conditions, scenes in by.items()}
                     for operation, by in ops.items()} for half, ops in counts.items()}
    return {"questions": len(rows), "halves": json.loads(json.dumps(halves))}


def _cell(scenes: dict) -> dict:
    """A kind of measurement in one condition: right of asked per scene and in all, the scene
    bootstrap's bound, and for counts the mean share a count was off by."""
    cell = {"right": sum(c["right"] for c in scenes.values()),
            "of": sum(c["of"] for c in scenes.values()),
            "scenes": {name: {"right": c["right"], "of": c["of"]}
                       for name, c in sorted(scenes.items())},
            "lower": precision.lower_bound(scenes)}
    if counted := sum(c.get("counted", 0) for c in scenes.values()):
        cell["relative_error"] = round(sum(c.get("off", 0) for c in scenes.values()) / counted, 3)
    return cell


def write_table(halves: dict, target: Path = precision.TABLE) -> None:
    """The tuning half, as `precision.measured()` reads it."""
    target.write_text(json.dumps(halves.get("tune", {}), indent=1, sort_keys=True) + "\n")
