"""`bench memory`: does memory make answers cheaper without making them worse?

One question file (the dev set, or a workload from `python -m backend workload`) is asked in one
order, once per memory configuration, each starting from an empty memory folder of its own:
`off` (no replay, no learning), `semantic` (learns; replays checked facts only), `procedural`
(learns; replays tool plans and decision patterns only), `both`, and `both+parametric`: `both`,
with the checked facts of the first half distilled into the small model's weights halfway
(`memory distill`, timed apart from the answers) and the distilled model asked first in the
second half. Memory can only pay on later questions, so every figure is given for the whole run
and for its second half. A question is a repeat where an earlier one asked the same need of the
same video with the same right answer (a paraphrase, or the same words again).

Every answered question is one JSON line (written as it goes, so a long run can be watched and
its figures re-made with `--from-jsonl`); the summary and the chart are computed from those
lines alone.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

from backend.config import Settings
from backend.errors import InputError
from backend.evaluation.harness import (AnswerFigures, AskFn, Outcome, ask_one, files_in,
                                        ingest_videos, start_llm)
from backend.evaluation.questions import choice_rows, question_labels
from backend.memory.replay import MemoryOptions

CONFIGS: dict[str, MemoryOptions] = {
    "off": MemoryOptions.off(),
    "semantic": MemoryOptions(procedural=False),
    "procedural": MemoryOptions(semantic=False),
    "both": MemoryOptions(),
    "both+parametric": MemoryOptions(),
}
PARAMETRIC = "+parametric"


def parse_configs(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names or (unknown := [c for c in names if c not in CONFIGS]):
        raise InputError(f"--configs takes a comma-separated subset of {', '.join(CONFIGS)}; "
                         f"{', '.join(unknown) or 'nothing'} is not one.")
    return list(dict.fromkeys(names))


def memory_bench(questions: Path, videos: Path, settings: Settings,
                 configs: list[str] | None = None, n_solutions: int | None = None,
                 limit: int | None = None, jsonl: Path | None = None, chart: Path | None = None,
                 progress: Callable[[dict, int], None] = lambda record, total: None,
                 answer: AskFn | None = None) -> dict:
    """progress(record, answers in all) after each answer; answer: `ask`'s stand-in for tests
    (same arguments), by default the real agent."""
    configs = configs or list(CONFIGS)
    rows = choice_rows(questions)[:limit]
    if not rows:
        raise InputError(f"{questions} holds no multiple-choice question.")
    labels = question_labels(questions)
    video_ids = ingest_videos(files_in(videos, (r["video"] for r in rows)), settings)
    if answer is None:
        start_llm(settings)
    records, distilled = [], {}
    repeats = _repeats(rows, labels)
    if jsonl:
        Path(jsonl).parent.mkdir(parents=True, exist_ok=True)
    out = open(jsonl, "w", encoding="utf-8") if jsonl else None
    try:
        for name in configs:
            with tempfile.TemporaryDirectory(prefix=f"memoryreel-bench-memory-{name}-") as tmp:
                run_settings = replace(settings, memory_dir=tmp, memory_uri="",
                                       parametric=name.endswith(PARAMETRIC))
                for index, row in enumerate(rows):
                    if run_settings.parametric and index == len(rows) // 2:
                        distilled[name] = _distill(run_settings, answer is not None)
                    outcome = ask_one(video_ids[row["video"]], row["question"], row["options"],
                                    run_settings, n_solutions=n_solutions, memory=CONFIGS[name],
                                    ask_fn=answer)
                    label = labels.get((row["video"], row["qid"]), {})
                    record = _record(name, index, row, label, outcome, repeats[index])
                    records.append(record)
                    if out:
                        out.write(json.dumps(record) + "\n")
                        out.flush()
                    progress(record, len(rows) * len(configs))
    finally:
        if out:
            out.close()
    summary = summarise(records, questions=str(questions), jsonl=str(jsonl) if jsonl else None,
                        chart=chart)
    summary["distilled"] = distilled
    return summary


def _repeats(rows: list[dict], labels: dict) -> list[bool]:
    """Whether each question asks what an earlier one asked: same video, need and right answer."""
    seen, out = set(), []
    for row in rows:
        label = labels.get((row["video"], row["qid"]), {})
        key = (row["video"], label.get("need") or row["type"], row["options"][row["answer"]]
               if row["answer"] is not None else None)
        out.append(key in seen)
        seen.add(key)
    return out


def _distill(settings: Settings, stand_in: bool) -> dict:
    """The first half's checked facts into the weights; figures or why nothing was distilled.
    With a stand-in agent (tests) nothing is trained."""
    from backend.memory import parametric

    if stand_in:
        return {"skipped": "a stand-in agent answers"}
    try:
        return parametric.distill(settings).as_dict()
    except InputError as e:
        return {"skipped": str(e)}


def _record(config: str, index: int, row: dict, label: dict, outcome: Outcome,
            repeat: bool = False) -> dict:
    f = outcome.figures or AnswerFigures(option=None, text=None, answered=False)
    facts = sum(kind == "semantic" for kind in f.replayed_kinds)
    correct = f.option == row["answer"]
    verdict = f.learn_verdict or "off"
    return {
        "config": config, "index": index, "video": row["video"], "qid": row["qid"],
        # Files without a truth column (the dev set) are hand-labelled: external truth too.
        "need": label.get("need") or row["type"], "truth": label.get("truth") or "external",
        "question": row["question"], "options": row["options"], "right": row["answer"],
        "chosen": f.option, "correct": correct,
        "answer_calls": f.llm_calls, "answer_prompt_tokens": f.prompt_tokens,
        "learn_calls": f.learn_calls, "learn_prompt_tokens": f.learn_prompt_tokens,
        "seconds": round(outcome.seconds + outcome.learn_seconds, 3),
        "replayed": len(f.replayed_kinds), "replayed_facts": facts,
        "replayed_plans": len(f.replayed_kinds) - facts,
        "basis": f.basis or "",
        "fact_decided": f.decided_kind == "semantic", "repeat": repeat,
        "parametric_asked": f.parametric is not None,
        "parametric_decided": bool(f.parametric and f.parametric.get("decided")),
        "plan_decided": f.decided_kind == "procedural", "verdict": verdict,
        # A wrong answer the validator passed: its summary is now a "checked fact" in memory.
        "wrong_fact": verdict == "valid" and f.learned_entry and not correct,
    }


def read_jsonl(path: Path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"'{path}' does not exist.")
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    except json.JSONDecodeError as e:
        raise InputError(f"{path} is not a bench memory JSONL file: {e}") from e


def _figures(records: list[dict]) -> dict:
    """Accuracy and cost per answer over some answers; calls and tokens include learning's."""
    n = len(records)
    external = [r for r in records if r["truth"] == "external"]

    def mean(value: Callable[[dict], float]) -> float:
        return round(sum(value(r) for r in records) / n, 2) if n else 0.0
    return {
        "answers": n, "correct": sum(r["correct"] for r in records),
        "accuracy": round(sum(r["correct"] for r in records) / n, 3) if n else None,
        "external": len(external), "external_correct": sum(r["correct"] for r in external),
        "external_accuracy": (round(sum(r["correct"] for r in external) / len(external), 3)
                              if external else None),
        "llm_calls": mean(lambda r: r["answer_calls"] + r["learn_calls"]),
        "answer_calls": mean(lambda r: r["answer_calls"]),
        "prompt_tokens": mean(lambda r: r["answer_prompt_tokens"] + r["learn_prompt_tokens"]),
        "seconds": mean(lambda r: r["seconds"]),
    }


def summarise(records: list[dict], questions: str | None = None, jsonl: str | None = None,
              chart: Path | None = None) -> dict:
    """Figures per configuration from the answers' records; chart: also write the chart there."""
    runs: dict[str, list[dict]] = {}
    for r in records:
        runs.setdefault(r["config"], []).append(r)
    summary = {}
    for name, rs in runs.items():
        rs.sort(key=lambda r: r["index"])
        summary[name] = {
            "whole": _figures(rs), "second_half": _figures(rs[len(rs) // 2:]),
            "replayed_per_answer": round(sum(r["replayed"] for r in rs) / len(rs), 2),
            "fact_decided": sum(r["fact_decided"] for r in rs),
            "repeats": _figures([r for r in rs if r.get("repeat")]),
            "parametric_decided": sum(r.get("parametric_decided", False) for r in rs),
            "parametric_right": sum(r.get("parametric_decided", False) and r["correct"]
                                    for r in rs),
            "parametric_decided_repeats": sum(r.get("parametric_decided", False)
                                              for r in rs if r.get("repeat")),
            "plan_decided": sum(r.get("plan_decided", False) for r in rs),
            "answered_from_memory": sum(r["basis"] == "memory" for r in rs),
            "valid": sum(r["verdict"] == "valid" for r in rs),
            "wrong_facts": sum(r["wrong_fact"] for r in rs),
        }
    off = summary.get("off")
    for figures in summary.values():
        figures["calls_vs_off_second_half"] = (
            round(figures["second_half"]["llm_calls"] / off["second_half"]["llm_calls"], 3)
            if off and off["second_half"]["llm_calls"] else None)
    return {"questions": questions, "jsonl": jsonl,
            "answers": max((len(rs) for rs in runs.values()), default=0),
            "configs": summary, "chart": write_chart(records, chart) if chart else None}


def summary_markdown(summary: dict) -> str:
    """The figures as a markdown table, whole run | second half, for docs/EVALUATION.md (the
    report includes a folder's `section.md`)."""
    def pct(x):
        return "-" if x is None else f"{100 * x:.0f} %"

    parametric = any(name.endswith(PARAMETRIC) for name in summary["configs"])
    title = "Parametric memory over a question workload" if parametric else \
        "Memory over a question workload"
    lines = [f"## {title} (bench memory)", "",
             f"{summary['answers']} questions per configuration, asked in one order. Per answer; "
             "LLM calls and prompt tokens include learning's. Each cell: whole run | second half.",
             "", "| memory | accuracy | accuracy, external truth | LLM calls | prompt tokens | "
             "seconds | replayed | fact / plan decided | wrong facts | calls vs off, 2nd half |",
             "|---|---|---|---|---|---|---:|---:|---:|---:|"]
    for name, c in summary["configs"].items():
        w, h = c["whole"], c["second_half"]
        ratio = "-" if c["calls_vs_off_second_half"] is None else f"{c['calls_vs_off_second_half']}x"
        lines.append(
            f"| {name} | {pct(w['accuracy'])} \\| {pct(h['accuracy'])} | "
            f"{pct(w['external_accuracy'])} ({w['external_correct']}/{w['external']}) \\| "
            f"{pct(h['external_accuracy'])} ({h['external_correct']}/{h['external']}) | "
            f"{w['llm_calls']} \\| {h['llm_calls']} | {w['prompt_tokens']:.0f} \\| "
            f"{h['prompt_tokens']:.0f} | {w['seconds']:.1f} \\| {h['seconds']:.1f} | "
            f"{c['replayed_per_answer']} | {c['fact_decided']} / {c.get('plan_decided', 0)} | "
            f"{c['wrong_facts']} | {ratio} |")
    repeats = [(name, c) for name, c in summary["configs"].items()
               if (c.get("repeats") or {}).get("answers")]
    if repeats:
        lines += ["", "Repeats (an earlier question asked the same need of the same video with "
                  "the same right answer): right, LLM calls and seconds per answer; answers the "
                  "distilled model decided, and how many of those were right.", "",
                  "| memory | repeats right | LLM calls | seconds | decided by the weights "
                  "(repeats / all) | of those right |", "|---|---|---:|---:|---:|---:|"]
        for name, c in repeats:
            r = c["repeats"]
            lines.append(f"| {name} | {r['correct']}/{r['answers']} | {r['llm_calls']} | "
                         f"{r['seconds']:.1f} | {c.get('parametric_decided_repeats', 0)} / "
                         f"{c.get('parametric_decided', 0)} | {c.get('parametric_right', 0)} |")
    if summary.get("chart") and summary["chart"].get("png"):
        lines += ["", f"![LLM calls per answer]({Path(summary['chart']['png']).name})"]
    return "\n".join(lines) + "\n"


def write_chart(records: list[dict], path: Path) -> dict:
    """LLM calls per answer (answering + learning) against the question's place in the run, one
    line per configuration, above the calls so far."""
    import itertools

    import plotly
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from backend.evaluation.report import save_chart

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("LLM calls per answer (answering + learning)",
                                        "LLM calls so far"))
    runs: dict[str, list[dict]] = {}
    for r in records:
        runs.setdefault(r["config"], []).append(r)
    for (name, rs), colour in zip(runs.items(), itertools.cycle(plotly.colors.qualitative.Plotly)):
        rs = sorted(rs, key=lambda r: r["index"])
        x = [r["index"] + 1 for r in rs]
        calls = [r["answer_calls"] + r["learn_calls"] for r in rs]
        total, cumulative = 0, []
        for c in calls:
            total += c
            cumulative.append(total)
        line = {"color": colour}
        fig.add_trace(go.Scatter(x=x, y=calls, mode="lines", name=name, legendgroup=name,
                                 line=line), 1, 1)
        fig.add_trace(go.Scatter(x=x, y=cumulative, mode="lines", name=name, legendgroup=name,
                                 line=line, showlegend=False), 2, 1)
    fig.update_xaxes(title_text="question (order asked)", row=2, col=1)
    fig.update_yaxes(title_text="calls", rangemode="tozero")
    fig.update_layout(title="Memory configurations over one question order",
                      template="plotly_white", width=900, height=640)
    return save_chart(fig, Path(path).with_suffix(""))
