"""Ablations as in the papers' tables: one factor at a time, varied from a base configuration.

- memory components (DigimonGPT table 2): none, semantic, procedural, both;
- planner solutions N (DoraemonGPT table 3c): 1, 2, 4;
- replay sizes (DigimonGPT table 3): dynamic (from question complexity) and fixed
  (k_s, k_p) = (1, 1), (3, 2), (5, 5).

The full cross product (4 x 3 x 4 = 48 runs) is not run: the papers do not report it, and each
run costs as much as a full evaluation. Configurations that coincide (the base appears in every
block) are run once, each in its own sub-folder with its own, initially empty, memory.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable

from backend.config import Settings
from backend.evaluation import report
from backend.evaluation.runner import RunConfig, run_eval

MEMORY = (("none", "off"), ("semantic", "semantic"), ("procedural", "procedural"),
          ("both", "all"))
SOLUTIONS = (1, 2, 4)
REPLAY = (("dynamic", "dynamic"), ("fixed (1,1)", "fixed:1,1"), ("fixed (3,2)", "fixed:3,2"),
          ("fixed (5,5)", "fixed:5,5"))


def variants(base: RunConfig) -> list[dict]:
    """(factor, setting, config, dir, default) rows; `dir` is shared by configurations that coincide."""
    rows = [("memory", label, replace(base, memory=m)) for label, m in MEMORY]
    rows += [("planner", f"N = {n}", replace(base, n_solutions=n)) for n in SOLUTIONS]
    rows += [("replay", label, replace(base, replay=r)) for label, r in REPLAY]
    dirs: dict[tuple, str] = {}
    out = []
    for factor, setting, config in rows:
        # Memory off ignores the replay size, so those runs coincide whatever --replay says.
        key = (config.options(), config.n_solutions)
        dirs.setdefault(key, config.slug())
        out.append({"factor": factor, "setting": setting, "config": asdict(config),
                    "dir": dirs[key], "default": key == (base.options(), base.n_solutions)})
    return out


def run_ablation(questions_path: Path, videos: Path, out: Path, settings: Settings,
                 base: RunConfig, *, progress: Callable[[str], None] = lambda line: None,
                 **run_kwargs) -> dict:
    """Run every distinct configuration (resumable like one run); returns the table's rows."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base = replace(base, n_solutions=base.n_solutions or settings.n_solutions)
    plan = {"base": asdict(base), "variants": variants(base)}
    (out / "ablation.json").write_text(json.dumps(plan, indent=2), encoding="utf-8")
    for dir_name in dict.fromkeys(v["dir"] for v in plan["variants"]):
        config = RunConfig(**next(v["config"] for v in plan["variants"] if v["dir"] == dir_name))
        progress(f"--- {dir_name}")
        run_eval(questions_path, videos, out / dir_name, settings, config, progress=progress,
                 chart=False, **run_kwargs)
    rows, _ = report.ablation_rows(out)
    table = report.ablation_table(rows)
    (out / "ablation.md").write_text(table + "\n", encoding="utf-8")
    return {"folder": str(out), "rows": rows, "table": table,
            "chart": report.write_ablation_chart(rows, out)}
