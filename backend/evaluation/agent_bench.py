"""`bench agent`: accuracy and cost of each agent on one multiple-choice question file.

Every question of a NExT-QA-layout CSV (default ../shared/eval/dev-qa.csv) is asked as multiple
choice, its clips ingested afresh into a library of the run's own, by each agent (the grounded
one and the earlier free-SQL one by default), side by side in one run; the figures are
percentiles and means per agent.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

from backend import config
from backend.config import AGENTS, Settings
from backend.errors import InputError
from backend.evaluation.harness import (AnswerFigures, AskFn, Outcome, ask_one, files_in,
                                        ingest_videos, start_llm)
from backend.evaluation.questions import choice_rows, question_labels
from backend.evaluation.scoring import percentile


def agent_bench(questions: Path, videos: Path, settings: Settings, n_solutions: int | None = None,
                limit: int | None = None, agents: tuple[str, ...] = ("grounded", "sql"),
                progress=print, ask_fn: AskFn | None = None,
                variants: list[dict[str, str]] | None = None, half: str | None = None) -> dict:
    """Every question of the file asked by each agent in `agents`, one after the other in one
    run, each with its own empty memory (so the first answers learn, as a new user's would).

    variants: settings to run each agent under, as environment overrides ({} for the settings
    as they are). Each variant ingests the videos into a library of its own: one ingested
    earlier, by older code, would be measured instead of the code as it is. half: only the
    workload rows of that half ("tune" or "report").
    Seconds to the answer are wall-clock from the question to the answer, learning excluded
    (and the embedded LLM server's start-up, done before the first question); learning's
    seconds are reported apart. ask_fn: `ask`'s stand-in for tests, by default the real agent.
    """
    if unknown := [a for a in agents if a not in AGENTS]:
        raise InputError(f"Unknown agent {', '.join(unknown)}: choose from {', '.join(AGENTS)}.")
    labels = question_labels(questions)
    rows = [r for r in choice_rows(questions)
            if half is None or labels.get((r["video"], r["qid"]), {}).get("half") == half][:limit]
    if not rows:
        raise InputError(f"{questions} holds no multiple-choice question"
                         + (f" in the {half!r} half." if half else "."))
    runs = {}
    with tempfile.TemporaryDirectory(prefix="memoryreel-bench-agent-") as root:
        for v, overrides in enumerate(variants or [{}]):
            run_settings = replace(config.with_overrides(settings, overrides),
                                   home=Path(root) / f"library-{v}")
            video_ids = ingest_videos(files_in(videos, (r["video"] for r in rows)), run_settings)
            if ask_fn is None:
                start_llm(run_settings)
            for agent in agents:
                name = f"{agent} {config.overrides_label(overrides)}".strip()
                agent_settings = replace(run_settings, agent=agent,
                                         memory_dir=str(Path(root) / f"memory-{v}-{agent}"),
                                         memory_uri="")
                results = []
                for row in rows:
                    outcome = ask_one(video_ids[row["video"]], row["question"], row["options"],
                                      agent_settings, n_solutions=n_solutions, ask_fn=ask_fn)
                    result = _agent_result(row, outcome, labels)
                    results.append(result)
                    progress(_progress_line(name, row, result, outcome.error))
                runs[name] = {"summary": _agent_summary(results), "results": results}
    return {"questions": len(rows), "n_solutions": n_solutions or settings.n_solutions,
            "agents": list(runs), "half": half, "runs": runs}


def _agent_result(row: dict, outcome: Outcome, labels: dict) -> dict:
    f = outcome.figures or AnswerFigures(option=None, text=outcome.error, answered=False)
    need = labels.get((row["video"], row["qid"]), {}).get("need") or row["type"]
    return {"video": row["video"], "qid": row["qid"], "type": row["type"], "need": need,
            "question": row["question"], "predicted": f.option, "truth": row["answer"],
            "correct": f.option == row["answer"], "answer": f.text,
            "seconds": round(outcome.seconds, 2), "llm_calls": f.llm_calls,
            "prompt_tokens": f.prompt_tokens, "completion_tokens": f.completion_tokens,
            "llm_seconds": f.llm_seconds, "other_seconds": f.other_seconds,
            "learning_calls": f.learn_calls, "learning_seconds": f.learn_llm_seconds,
            "format_failures": f.format_failures, "confidence": f.confidence or "none",
            "basis": f.basis or "none"}


def _progress_line(agent: str, row: dict, result: dict, error: str | None) -> str:
    verdict = f"ERROR {error[:200]}" if error else ("right" if result["correct"] else "wrong")
    return (f"{agent:>8}  {verdict}  {row['video']} q{row['qid']} ({row['type']}): predicted "
            f"{result['predicted']}, truth {row['answer']}; {result['llm_calls']} calls, "
            f"{result['seconds']} s, confidence {result['confidence']} ({result['basis']})")


def _agent_summary(results: list[dict]) -> dict:
    n = len(results)
    mean = lambda key: round(sum(r[key] for r in results) / n, 2)  # noqa: E731
    return {"questions": n, "correct": sum(r["correct"] for r in results),
            "accuracy": round(sum(r["correct"] for r in results) / n, 3),
            "seconds_p50": percentile([r["seconds"] for r in results], 0.5),
            "seconds_p95": percentile([r["seconds"] for r in results], 0.95),
            "llm_calls_p50": percentile([r["llm_calls"] for r in results], 0.5),
            "llm_calls_mean": mean("llm_calls"), "prompt_tokens_mean": mean("prompt_tokens"),
            "completion_tokens_mean": mean("completion_tokens"),
            "learning_seconds_mean": mean("learning_seconds"),
            "format_failures": sum(r["format_failures"] for r in results),
            "accuracy_by_need": {
                need: f"{sum(r['correct'] for r in results if r['need'] == need)}/"
                      f"{sum(1 for r in results if r['need'] == need)}"
                for need in sorted({r["need"] for r in results})},
            "confidence": dict(Counter(r["confidence"] for r in results)),
            "accuracy_by_confidence": {
                level: f"{sum(r['correct'] for r in results if r['confidence'] == level)}/"
                       f"{sum(1 for r in results if r['confidence'] == level)}"
                for level in dict.fromkeys(r["confidence"] for r in results)}}


def summary_markdown(payload: dict, title: str) -> str:
    """One column per agent run, for docs/EVALUATION.md (the report includes a folder's
    `section.md`)."""
    runs = payload["runs"]
    names = list(runs)
    needs = sorted({n for r in runs.values() for n in r["summary"]["accuracy_by_need"]})

    def row(label: str, shown) -> str:
        return f"| {label} | " + " | ".join(shown(runs[n]["summary"]) for n in names) + " |"
    lines = [f"## {title}", "",
             f"{payload['questions']} multiple-choice questions"
             + (f", the {payload['half']} half of the workload" if payload.get("half") else "")
             + f", N = {payload['n_solutions']}, asked in one order by each run in its own memory.",
             "", "| | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|" + "---:|" * len(names),
             row("accuracy", lambda s: f"{s['correct']}/{s['questions']} ({s['accuracy']:.0%})"),
             row("high-confidence precision",
                 lambda s: s["accuracy_by_confidence"].get("high", "0/0")),
             row("right per confidence", lambda s: ", ".join(
                 f"{k} {v}" for k, v in s["accuracy_by_confidence"].items())),
             row("format failures", lambda s: str(s["format_failures"])),
             row("seconds to answer p50 / p95", lambda s: f"{s['seconds_p50']} / {s['seconds_p95']}"),
             row("LLM calls mean", lambda s: str(s["llm_calls_mean"]))]
    lines += [row(f"right: {need}", lambda s, need=need: s["accuracy_by_need"].get(need, "-"))
              for need in needs]
    return "\n".join(lines) + "\n"
