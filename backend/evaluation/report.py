"""Tables, charts and docs/EVALUATION.md, all computed from a run folder's results.jsonl.

The PNG chart needs kaleido, which drives a Chrome or Chromium it finds on PATH (or at
BROWSER_PATH); without one the chart is written as HTML only and the summary says why.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

from backend.errors import InputError, NotFoundError
from backend.evaluation import scoring

log = logging.getLogger(__name__)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _ci(row: dict) -> str:
    return f"[{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]" if row["n"] else "-"


def accuracy_table(rows: list[dict], first: str = "group") -> str:
    lines = [f"| {first} | questions | right | accuracy % | 95% CI % | errors |",
             "|---|---:|---:|---:|---|---:|"]
    for r in rows:
        label = r["group"] if r["group"] == r["name"] else f"{r['group']} ({r['name']})"
        lines.append(f"| {label} | {r['n']} | {r['correct']} | {_pct(r['accuracy'])} | "
                     f"{_ci(r)} | {r['errors']} |")
    return "\n".join(lines)


def cost_table(cost: dict) -> str:
    if cost.get("llm_calls") is None:
        return "(no question finished without an error)"
    # Runs from before the cache and reading figures were kept have neither.
    cached, reading = cost.get("cached_tokens") or 0, cost.get("prompt_seconds") or 0
    return "\n".join([
        "| LLM calls | prompt tokens (from cache) | completion tokens | LLM s (reading prompts) | "
        "other s | wall s | learning: calls / tokens / s | tree nodes | memories replayed |",
        "|---:|---:|---:|---:|---:|---:|---|---:|---:|",
        f"| {cost['llm_calls']} | {cost['prompt_tokens']:.0f} ({cached:.0f}) | "
        f"{cost['completion_tokens']:.0f} | {cost['llm_seconds']} ({reading}) | "
        f"{cost['other_seconds']} | {cost['seconds']} | "
        f"{cost['learn_llm_calls']} / "
        f"{cost['learn_prompt_tokens'] + cost['learn_completion_tokens']:.0f} / "
        f"{cost['learn_llm_seconds']} | {cost['tree_size']} | {cost['replayed']} |"])


_FAILURE_MEANINGS = {
    "perception": "no step observed evidence for the right answer",
    "reading": "a step's evidence supports the right answer; the pick contradicts it",
    "routing": "no typed query or computation ran: the wrong tool, or memories only",
    "budget": "no answer within the LLM-call or time budget",
    "error": "the question raised an error", "unclassified": "a record from before the classes"}


def failure_table(failures: dict) -> str:
    """Wrong answers by why they were wrong, biggest class first."""
    if not failures:
        return "No wrong answers."
    rows = [f"| {name} | {n} | {_FAILURE_MEANINGS.get(name, '')} |" for name, n in failures.items()]
    return "\n".join(["| failure class | wrong answers | meaning |", "|---|---:|---|", *rows])


def text_summary(summary: dict) -> str:
    """What the CLI prints after a run."""
    parts = [accuracy_table(summary["groups"]), "", *confidence_lines(summary), "",
             "Wrong answers by class:", failure_table(summary.get("failures") or {}), "",
             "Per answer (mean over questions without an error):",
             cost_table(summary["cost_per_answer"]), "", answer_time_line(summary)]
    oe = summary["open_ended"]
    if oe["n"]:
        parts.append(f"\nOpen-ended: {oe['exact']}/{oe['n']} exact (normalised), "
                     f"{oe['contains']}/{oe['n']} containing the answer.")
    chart = summary.get("chart")
    if chart:
        parts.append(f"\nChart: {chart['html']}" + (f", {chart['png']}" if chart["png"] else
                                                     f" (no PNG: {chart['png_error']})"))
    return "\n".join(parts)


def answer_time_line(summary: dict) -> str:
    times = summary.get("answer_time")
    if not times:
        return "Answer shown: no question finished without an error"
    return (f"Answer shown (question to answer, learning after it excluded): p50 {times['p50']} s, "
            f"p90 {times['p90']} s, max {times['max']} s over {times['n']} answers")


def confidence_lines(summary: dict) -> list[str]:
    """High-confidence precision on a line of its own, then accuracy per stated level."""
    stated = summary.get("by_confidence") or {"levels": {}, "high_precision": None}
    high = stated["levels"].get("high")
    lines = [f"High-confidence precision: {high['right']}/{high['of']} "
             f"({stated['high_precision']:.0%})" if high else
             "High-confidence precision: no answer said high"]
    if stated["levels"]:
        lines.append("Accuracy by stated confidence: " + ", ".join(
            f"{level} {c['right']}/{c['of']}" for level, c in stated["levels"].items()))
    return lines


def write_reliability_chart(summary: dict, out: Path) -> dict | None:
    """Accuracy per stated confidence level, with how many answers said it: a label is worth
    what its bar shows (reliability.html and, where kaleido can, reliability.png)."""
    import plotly.graph_objects as go

    levels = (summary.get("by_confidence") or {}).get("levels") or {}
    if not levels:
        return None
    names = list(levels)
    fig = go.Figure(go.Bar(
        x=[f"{n} ({levels[n]['right']}/{levels[n]['of']})" for n in names],
        y=[100 * levels[n]["right"] / levels[n]["of"] for n in names]))
    fig.add_hline(y=90, line_dash="dot", annotation_text="90 %: what 'high' should hold")
    fig.update_layout(title="How often an answer is right, by the confidence it stated",
                      yaxis={"title": "accuracy %", "range": [0, 100]},
                      template="plotly_white", width=760, height=420)
    return save_chart(fig, Path(out) / "reliability")


def write_chart(summary: dict, out: Path, title: str | None = None) -> dict:
    """Accuracy per group with its 95% interval, as chart.html and (where kaleido can) chart.png."""
    import plotly.graph_objects as go

    rows = [r for r in summary["groups"] if r["n"]]
    acc = [100 * r["accuracy"] for r in rows]
    fig = go.Figure(go.Bar(
        x=[f"{r['name']} ({r['correct']}/{r['n']})" for r in rows], y=acc,
        error_y={"type": "data", "symmetric": False,
                 "array": [100 * r["ci_high"] - a for r, a in zip(rows, acc)],
                 "arrayminus": [a - 100 * r["ci_low"] for r, a in zip(rows, acc)]}))
    run = summary.get("run", {})
    fig.update_layout(title=title or f"Accuracy with 95% Wilson intervals: {_run_label(run)}",
                      yaxis={"title": "accuracy %", "range": [0, 100]}, xaxis={"title": "group"},
                      template="plotly_white", width=760, height=460)
    return save_chart(fig, Path(out) / "chart")


def write_ablation_chart(rows: list[dict], out: Path) -> dict:
    import plotly.graph_objects as go

    alls = [r["all"] for r in rows]
    acc = [100 * (a["accuracy"] or 0) for a in alls]
    fig = go.Figure(go.Bar(
        x=[f"{r['factor']}: {r['setting']} ({a['correct']}/{a['n']})" for r, a in zip(rows, alls)],
        y=acc,
        error_y={"type": "data", "symmetric": False,
                 "array": [100 * a["ci_high"] - v for a, v in zip(alls, acc)],
                 "arrayminus": [v - 100 * a["ci_low"] for a, v in zip(alls, acc)]}))
    fig.update_layout(title="Ablation: accuracy (all questions) with 95% Wilson intervals",
                      yaxis={"title": "accuracy %", "range": [0, 100]}, template="plotly_white",
                      width=900, height=480)
    return save_chart(fig, Path(out) / "ablation")


def save_chart(fig, stem: Path) -> dict:
    html = stem.with_suffix(".html")
    fig.write_html(html, include_plotlyjs=True)    # self-contained: opens offline
    png, error = stem.with_suffix(".png"), None
    try:
        fig.write_image(png)
    except Exception as e:  # kaleido missing, or no Chrome/Chromium to drive
        png, error = None, (f"{type(e).__name__}: {e}".splitlines()[0] +
                            " -- install kaleido and Chrome/Chromium (or set BROWSER_PATH) for PNG")
        log.warning("chart PNG not written: %s", error)
    return {"html": str(html), "png": str(png) if png else None, "png_error": error}


# --- ablation tables -------------------------------------------------------------------------

def ablation_table(rows: list[dict]) -> str:
    lines = ["| factor | setting | C % | T % | D % | all % [95% CI] | n | errors | calls/answer | "
             "tokens/answer | s/answer | replayed/answer |",
             "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        groups = {g["group"]: g for g in r["groups"]}
        cells = [_pct(groups[g]["accuracy"]) if g in groups else "-" for g in ("C", "T", "D")]
        a, c = r["all"], r["cost"]
        tokens = "-" if c["prompt_tokens"] is None else f"{c['prompt_tokens'] + c['completion_tokens']:.0f}"
        lines.append(f"| {r['factor']} | {r['setting']}{' (default)' if r['default'] else ''} | "
                     + " | ".join(cells) + f" | {_pct(a['accuracy'])} {_ci(a)} | {a['n']} | "
                     f"{a['errors']} | {c['llm_calls']} | {tokens} | {c['seconds']} | {c['replayed']} |")
    return "\n".join(lines)


def ablation_rows(folder: Path) -> tuple[list[dict], dict]:
    """One row per (factor, setting) of an ablation folder, scored from each run's JSONL."""
    plan = json.loads((Path(folder) / "ablation.json").read_text(encoding="utf-8"))
    rows, summaries = [], {}
    for v in plan["variants"]:
        if v["dir"] not in summaries:
            summaries[v["dir"]] = load_run(Path(folder) / v["dir"])
        s = summaries[v["dir"]]
        rows.append({**v, "groups": s["groups"][:-1], "all": s["groups"][-1],
                     "cost": s["cost_per_answer"]})
    return rows, plan


# --- docs/EVALUATION.md ----------------------------------------------------------------------

RESULTS = "results.jsonl"  # one JSON record per answered question, in a run folder


def load_results(path: Path) -> list[dict]:
    """Records of a results file; a last line cut short by an interruption is dropped."""
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if text and not text.endswith("\n"):
        log.warning("dropping an unfinished last line of %s", path)
        lines = lines[:-1]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise InputError(f"{path} line {number} is not JSON ({e}); fix or remove it.") from e
    return records



def load_run(folder: Path) -> dict:
    """A run folder's description and its summary, recomputed from results.jsonl."""
    folder = Path(folder)
    if not (folder / "run.json").is_file():
        raise NotFoundError(f"{folder} is not a run folder (no run.json).")
    records = load_results(folder / RESULTS)
    if not records:
        raise InputError(f"{folder} has no results yet.")
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    return {"run": run, "records": records, **scoring.summarize(records)}


def _run_label(run: dict) -> str:
    c = run.get("config", {})
    # Runs from before MEMORYREEL_AGENT existed used the free-SQL agent.
    return (f"{Path(run.get('questions', '?')).name}, {run.get('agent', 'sql')} agent, memory "
            f"{c.get('memory')}, N = {c.get('n_solutions')}, replay {c.get('replay')}")


def _notes(folder: Path) -> str:
    notes = Path(folder) / "notes.md"
    return notes.read_text(encoding="utf-8").strip() if notes.is_file() else ""


def _about(run: dict) -> list[str]:
    c = run["config"]
    lines = [f"- command: `{run.get('command') or '(not recorded)'}`",
             f"- model: {run.get('model')}, {run.get('llm_threads')} LLM threads",
             f"- machine: {run.get('machine')}",
             f"- code: commit {run.get('commit') or '?'}, started {run.get('started_at')}",
             f"- options: memory {c['memory']}, N = {c['n_solutions']}, replay {c['replay']}, "
             f"seed {c['seed']}" + (f", first {c['limit']} of the seeded order" if c.get("limit")
                                    else "")]
    for r in run.get("resumed", []):
        lines.append(f"- resumed {r['at']}: `{r['command']}`")
    return lines


def _run_section(folder: Path, output: Path) -> str:
    s = load_run(folder)
    run, records = s["run"], s["records"]
    parts = [f"## {_run_label(run)}", "", f"Run folder: `{folder}`.", "", *_about(run), "",
             "### Accuracy by NExT-QA group", "", accuracy_table(s["groups"]), "",
             "### Accuracy by stated confidence", "", *confidence_lines(s), "",
             "### Accuracy by question type", "", accuracy_table(s["types"], "type"), "",
             "### Wrong answers by failure class", "",
             failure_table(s["failures"]), "",
             "### Cost per answer", "", cost_table(s["cost_per_answer"]), "",
             answer_time_line(s), "",
             "### Every question (in the order asked)", "",
             "| # | question | type | truth | predicted | right | failure | confidence | "
             "LLM calls | s | replayed | error |",
             "|---:|---|---|---|---|---|---|---|---:|---:|---:|---|"]
    for r in sorted(records, key=lambda r: r.get("position", 0)):
        truth = r["truth"] if r["truth"] is not None else r["truth_text"]
        predicted = r["predicted"] if r["truth"] is not None else (r["predicted_text"] or "")[:60]
        error = (r["error"] or "")[:80].replace("|", "/")
        # Runs from before answers carried a confidence have none.
        confidence = f"{r['confidence']} ({r['basis']})" if r.get("confidence") else ""
        parts.append(f"| {r.get('position', '')} | {r['key']}: {r['question']} | {r['type']} | "
                     f"{truth} | {predicted} | {'yes' if r['correct'] else 'no'} | "
                     f"{r.get('failure') or ''} | {confidence} | "
                     f"{r['llm_calls']} | {r['seconds']} | {r['replayed']} | {error} |")
    if (folder / "reliability.png").is_file():
        at = parts.index("### Accuracy by question type")
        parts[at:at] = [f"![accuracy by stated confidence]"
                        f"({_relative(folder / 'reliability.png', output)})", ""]
    if (folder / "chart.png").is_file():
        parts[4:4] = [f"![accuracy per group]({_relative(folder / 'chart.png', output)})", ""]
    notes = _notes(folder)
    return "\n".join(parts + (["", notes] if notes else []))


def _ablation_section(folder: Path, output: Path) -> str:
    rows, plan = ablation_rows(folder)
    first = load_run(Path(folder) / rows[0]["dir"])["run"]
    parts = [f"## Ablation on {Path(first['questions']).name}", "", f"Ablation folder: `{folder}`.",
             "", *[line for line in _about(first) if not line.startswith("- options")],
             f"- base configuration: memory {plan['base']['memory']}, "
             f"N = {plan['base']['n_solutions']}, replay {plan['base']['replay']}, "
             f"seed {plan['base']['seed']}"
             + (f", first {plan['base']['limit']} questions of the seeded order"
                if plan['base'].get('limit') else ""), "",
             "One factor at a time is varied from the base, as in the papers' tables (DigimonGPT "
             "tables 2 and 3, DoraemonGPT table 3c), not the full cross product; the base row is "
             "run once and repeated in each block. Each configuration starts with empty memory.",
             "", ablation_table(rows)]
    if (folder / "ablation.png").is_file():
        parts[4:4] = [f"![ablation]({_relative(folder / 'ablation.png', output)})", ""]
    notes = _notes(folder)
    return "\n".join(parts + (["", notes] if notes else []))


def _written_section(folder: Path, output: Path) -> str:
    """A folder's `section.md`, its images linked from where `output` is, then its notes."""
    text = (folder / "section.md").read_text(encoding="utf-8").strip()
    text = re.sub(r"!\[([^\]]*)\]\(([^)/]+)\)",
                  lambda m: f"![{m.group(1)}]({_relative(folder / m.group(2), output)})", text)
    notes = _notes(folder)
    return "\n".join([text] + (["", notes] if notes else []))


def _relative(path: Path, output: Path) -> str:
    return os.path.relpath(path.resolve(), output.resolve().parent)


INTRO = """# Evaluation

Measured with `python -m backend eval` (see the README's Evaluation section). This file is
generated from the runs' `results.jsonl` files; re-generate it with

```bash
{command}
```

How the figures are made:

- Every question is asked as multiple choice (open-ended files are scored by normalised exact
  match). A question the agent could not answer, or that raised an error, counts as wrong.
- Groups follow NExT-QA: causal C = CW + CH, temporal T = TN + TC + TP, descriptive D = DC + DL +
  DO, and all.
- The 95% intervals are Wilson score intervals. With the 14 development questions an interval
  spans about 50 percentage points, so differences between configurations of a few questions
  are within noise: these tables say what the system does on these clips, not how it ranks on
  NExT-QA.
- Each run starts with empty semantic and procedural memory (its own `memory/` folder) and asks
  the questions in a seeded shuffle (the seed is listed per run), so runs are comparable and later questions can
  benefit from what earlier ones taught the memory.
- Cost is the mean per answer over questions without an error: LLM calls, tokens and seconds
  of the answer, and separately of the learning step that writes memory after it.
- Every wrong answer gets a failure class, computed by code from the steps it took
  (`backend/evaluation/failures.py`; each record's `path` keeps every step's tool, input,
  observation and value): **perception** (no step observed evidence for the right answer: the
  tables never held it), **reading** (a step's evidence supports the right answer, by the
  same option matching the agent uses, and the pick contradicts it), **routing** (no typed
  query or computation ran: the wrong tool, or memories only) and **budget** (no answer within
  the LLM-call or time budget). Runs from before the classes show `unclassified`. Start a
  round from the biggest class.
"""


def evaluation_markdown(folders: list[Path], command: str, output: Path) -> str:
    """The whole report; chart images are linked relative to where `output` will be written."""
    sections = [INTRO.format(command=command).rstrip()]
    for folder in folders:
        folder = Path(folder)
        if (folder / "section.md").is_file():  # figures another command wrote (bench memory)
            sections.append(_written_section(folder, output))
        elif (folder / "ablation.json").is_file():
            sections.append(_ablation_section(folder, output))
        else:
            sections.append(_run_section(folder, output))
    return "\n\n".join(sections) + "\n"
