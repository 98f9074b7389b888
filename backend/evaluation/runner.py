"""One evaluation run: ask every question of a file, one JSON line per question, then a summary.

A run folder holds `run.json` (what was run), `results.jsonl` (one record per question, written
and flushed as each finishes), `summary.json`, `chart.html`/`chart.png` and `memory/` (the
run's own semantic and procedural memory, emptied when a run starts so runs are comparable).
`resume=True` reads the records already there and asks only the rest, in the same seeded
order, keeping the memory the first part built. A question whose answer raised is recorded
with its error and counts as wrong; it is not asked again on resume.
"""

from __future__ import annotations

import json
import os
import platform
import random
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from backend.config import Settings
from backend.errors import InputError
from backend.evaluation import failures, report
from backend.evaluation.harness import (AnswerFigures, AskFn, IngestFn, Outcome, ask_one,
                                        ingest_videos)
from backend.evaluation.report import RESULTS, load_results
from backend.evaluation.questions import Question, read_questions, read_video_map, resolve_video
from backend.evaluation.scoring import group_of, open_ended_match, summarize
from backend.memory.replay import MemoryOptions

MEMORY_CHOICES = ("off", "semantic", "procedural", "all")


@dataclass(frozen=True)
class RunConfig:
    memory: str = "all"              # off | semantic | procedural | all
    n_solutions: int | None = None   # None: settings.n_solutions
    replay: str = "dynamic"          # dynamic | fixed:KS,KP
    seed: int = 0
    limit: int | None = None

    def options(self) -> MemoryOptions:
        return memory_options(self.memory, self.replay)

    def slug(self) -> str:
        replay = self.replay.replace("fixed:", "fixed").replace(",", "-")
        return f"memory-{self.memory}_n{self.n_solutions or 'default'}_{replay}_seed{self.seed}"


def parse_replay(text: str) -> tuple[int, int] | None:
    """'dynamic' -> None (k from question complexity); 'fixed:KS,KP' -> (KS, KP)."""
    if text == "dynamic":
        return None
    head, _, tail = text.partition(":")
    parts = tail.split(",")
    if head == "fixed" and len(parts) == 2 and all(p.strip().isdigit() for p in parts):
        return int(parts[0]), int(parts[1])
    raise InputError(f"--replay must be 'dynamic' or 'fixed:KS,KP' (e.g. fixed:3,2), not '{text}'.")


def memory_options(memory: str, replay: str = "dynamic") -> MemoryOptions:
    if memory not in MEMORY_CHOICES:
        raise InputError(f"--memory must be one of {', '.join(MEMORY_CHOICES)}, not '{memory}'.")
    fixed = parse_replay(replay)
    if memory == "off":
        return MemoryOptions.off()
    return MemoryOptions(semantic=memory in ("semantic", "all"),
                         procedural=memory in ("procedural", "all"), learn=True, fixed_k=fixed)


def ordered(questions: list[Question], seed: int, limit: int | None = None) -> list[Question]:
    """A seeded shuffle, then the first `limit`: the same seed gives the same questions in order."""
    shuffled = list(questions)
    random.Random(seed).shuffle(shuffled)
    return shuffled[:limit] if limit is not None else shuffled


def run_eval(questions_path: Path, videos: Path, out: Path, settings: Settings, config: RunConfig,
             *, video_map: Path | None = None, resume: bool = False, keep_memory: bool = False,
             command: str = "", ask_fn: AskFn | None = None, ingest_fn: IngestFn | None = None,
             progress: Callable[[str], None] = lambda line: None, chart: bool = True) -> dict:
    """Run (or finish) one evaluation into `out`; returns the summary (also in summary.json)."""
    out = Path(out)
    questions = ordered(read_questions(questions_path), config.seed, config.limit)
    names = read_video_map(video_map) if video_map else None
    files = {q.video: resolve_video(q.video, Path(videos), names) for q in questions}
    config = replace(config, n_solutions=config.n_solutions or settings.n_solutions)
    options = config.options()

    out.mkdir(parents=True, exist_ok=True)
    results_path = out / RESULTS
    done, meta = _prepare(out, _run_meta(questions_path, videos, settings, config, command),
                          resume, keep_memory)
    # The run's own memory, never the configured store's (MEMORYREEL_MEMORY_URI).
    run_settings = replace(settings, memory_dir=str(out / "memory"), memory_uri="")

    todo = [q for q in questions if q.key not in done]
    progress(f"{len(questions)} questions, {len(done)} already done, {len(todo)} to ask -> {out}")
    video_ids = ingest_videos({q.video: files[q.video] for q in todo}, run_settings, ingest_fn)
    if todo and ask_fn is None:
        # As the app does at start; never raises: a model that cannot start is each answer's error.
        from backend.warm_up import warm_up
        warm_up(run_settings)
    with open(results_path, "a", encoding="utf-8") as sink:
        for position, q in enumerate(questions, start=1):
            if q.key in done:
                continue
            outcome = ask_one(video_ids[q.video], q.question, list(q.options or []) or None,
                            run_settings, n_solutions=config.n_solutions, memory=options,
                            ask_fn=ask_fn)
            record = _record(q, outcome)
            record["position"] = position
            sink.write(json.dumps(record, default=str) + "\n")
            sink.flush()
            os.fsync(sink.fileno())
            progress(_progress_line(position, len(questions), record))

    records = load_results(results_path)
    summary = {"run": meta, **summarize(records)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if chart:
        summary["chart"] = report.write_chart(summary, out)
        report.write_reliability_chart(summary, out)
    return summary


def _prepare(out: Path, meta: dict, resume: bool, keep_memory: bool) -> tuple[set[str], dict]:
    """Check or write run.json and empty the memory on a fresh start.

    Returns the keys already answered and the run's description. On resume the options must
    match, except --limit, which may grow: the seeded order makes the first N the same.
    """
    run_file, results_path = out / "run.json", out / RESULTS
    if resume and run_file.is_file():
        before = json.loads(run_file.read_text(encoding="utf-8"))
        same = {k: v for k, v in meta["config"].items() if k != "limit"}
        if before.get("questions") != meta["questions"] or \
                {k: v for k, v in before["config"].items() if k != "limit"} != same:
            raise InputError(f"--resume: {out} was run on {before.get('questions')} with "
                             f"{before.get('config')}; resume with the same file and options "
                             "or give another --out.")
        before["config"]["limit"] = meta["config"]["limit"]
        before.setdefault("resumed", []).append({"command": meta["command"],
                                                 "at": meta["started_at"]})
        run_file.write_text(json.dumps(before, indent=2), encoding="utf-8")
        return {r["key"] for r in load_results(results_path)}, before
    if results_path.is_file() and results_path.stat().st_size:
        raise InputError(f"{out} already holds results: add --resume to finish that run, "
                         "or give another --out.")
    if not keep_memory:
        shutil.rmtree(out / "memory", ignore_errors=True)
    run_file.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return set(), meta


def _record(q: Question, outcome: Outcome) -> dict:
    record = _blank_record(q)
    record.update(video_id=outcome.video_id, error=outcome.error,
                  seconds=round(outcome.seconds + outcome.learn_seconds, 2),
                  answer_seconds=round(outcome.seconds, 2),
                  learn_seconds=round(outcome.learn_seconds, 2))
    if outcome.figures:
        _fill(record, q, outcome.figures)
    return record


def _blank_record(q: Question) -> dict:
    return {"key": q.key, "video": q.video, "qid": q.qid, "type": q.type,
            "group": group_of(q.type), "question": q.question,
            "options": list(q.options) if q.options else None, "truth": q.answer,
            "truth_text": q.answer_text, "video_id": None, "predicted": None,
            "predicted_text": None, "correct": False, "contains": None, "answered": False,
            "error": None, "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
            "llm_seconds": 0.0, "other_seconds": 0.0, "cached_tokens": 0, "prompt_seconds": 0.0,
            "seconds": 0.0, "answer_seconds": 0.0, "learn_seconds": 0.0, "learn_llm_calls": 0,
            "learn_prompt_tokens": 0, "learn_completion_tokens": 0, "learn_llm_seconds": 0.0,
            "learn_verdict": None, "tree_size": 0, "replayed": 0, "replayed_kinds": {},
            "k_s": None, "k_p": None, "complexity": None, "confidence": None, "basis": None,
            "path": [], "failure": None, "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _fill(record: dict, q: Question, f: AnswerFigures) -> None:
    record.update(predicted_text=f.text, answered=f.answered, tree_size=f.tree_size,
                  replayed=len(f.replayed_kinds), replayed_kinds=dict(Counter(f.replayed_kinds)),
                  learn_verdict=f.learn_verdict, k_s=f.k_s, k_p=f.k_p, complexity=f.complexity,
                  confidence=f.confidence, basis=f.basis, llm_calls=f.llm_calls,
                  prompt_tokens=f.prompt_tokens, completion_tokens=f.completion_tokens,
                  llm_seconds=f.llm_seconds, other_seconds=f.other_seconds,
                  cached_tokens=f.cached_tokens, prompt_seconds=f.prompt_seconds,
                  learn_llm_calls=f.learn_calls, learn_prompt_tokens=f.learn_prompt_tokens,
                  learn_completion_tokens=f.learn_completion_tokens,
                  learn_llm_seconds=f.learn_llm_seconds)
    if q.multiple_choice:
        record["predicted"] = f.option
        record["correct"] = f.option is not None and f.option == q.answer
    else:
        record["correct"], record["contains"] = open_ended_match(f.text or "", q.answer_text)
    tree = list(f.tree)
    record["path"] = failures.path(tree, list(f.chosen_leaves))
    if not record["correct"]:
        record["failure"] = failures.classify(tree, f.answered, list(q.options or []) or None,
                                              q.answer if q.multiple_choice else None,
                                              q.answer_text)


def _progress_line(position: int, total: int, r: dict) -> str:
    head = f"[{position}/{total}] {r['key']} ({r['type']})"
    if r["error"]:
        return f"{head}: ERROR {r['error'][:200]}"
    verdict = "right" if r["correct"] else "wrong"
    shown = r["predicted"] if r["truth"] is not None else repr((r["predicted_text"] or "")[:60])
    truth = r["truth"] if r["truth"] is not None else repr(r["truth_text"])
    return (f"{head}: {verdict}, predicted {shown}, truth {truth}; {r['llm_calls']} calls, "
            f"{r['prompt_tokens'] + r['completion_tokens']} tokens, {r['seconds']} s, "
            f"{r['replayed']} replayed")


def _run_meta(questions_path: Path, videos: Path, settings: Settings, config: RunConfig,
              command: str) -> dict:
    if settings.llm_base_url:
        model = f"{settings.llm_model or 'default'} at {settings.llm_base_url}"
    elif settings.llm_gguf:
        model = f"{Path(settings.llm_gguf).name} (embedded llama.cpp)"
    else:
        model = f"Qwen2.5-Coder-{settings.llm_size.upper()}-Instruct Q4_K_M (embedded llama.cpp)"
    return {"questions": str(Path(questions_path).resolve()), "videos": str(Path(videos).resolve()),
            "config": asdict(config), "memory_options": asdict(config.options()),
            "model": model, "llm_threads": settings.llm_threads, "agent": settings.agent,
            "machine": _machine(),
            "commit": _commit(), "command": command,
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPU cores ({cpu}), {platform.system()}, Python {sys.version.split()[0]}"


def _commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).resolve().parents[2], timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None
