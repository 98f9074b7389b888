"""`python -m backend ...`: the command line. With --json, each command prints one JSON object.

Errors a user can act on exit with status 2 and a one-line message (as JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from tqdm import tqdm

from backend import config
from backend.errors import MemoryReelError

# Where the sample clips and dev questions live beside a checkout (as in CI).
_SHARED = Path(os.environ.get("MEMORYREEL_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def _ingest(args, settings) -> dict:
    from backend.ingest import ingest

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if args.json or args.quiet:
            return
        bar = bars.get(stage)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = bars[stage] = tqdm(total=total or None, desc=stage, unit="step", file=sys.stderr,
                                     leave=False)
        bar.total = total or bar.total
        bar.n = done
        bar.refresh()

    try:
        result = ingest(Path(args.path), settings, progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    return result.as_dict()


def _info(args, settings) -> dict:
    from backend.library import Library

    library = Library(settings.home)
    if args.video_id:
        return library.get(args.video_id).info()
    return {"home": str(settings.home.resolve()), "videos": [
        {"video_id": e.video_id, "name": e.name, "duration": round(e.duration, 2),
         "ingested_at": e.ingested_at} for e in library.list()]}


def _sql(args, settings) -> dict:
    from backend.library import Library
    from backend.sql_runner import run_query

    entry = Library(settings.home).get(args.video_id)
    result = run_query(entry.db_path, args.query, timeout_s=settings.sql_timeout_s,
                       max_rows=settings.sql_max_rows)
    return {"video_id": entry.video_id, "columns": result.columns,
            "rows": [list(r) for r in result.rows], "truncated": result.truncated,
            "seconds": round(result.seconds, 4)}


def _ask(args, settings) -> dict:
    from backend.agent.ask import ask

    options = [o.strip() for o in args.options.split("|")] if args.options else None
    document = (Path(args.document).name, Path(args.document).read_text()) if args.document else None

    def show(node) -> None:
        if not (args.json or args.quiet):
            what = node.failure or node.answer or node.observation
            print(f"  [{node.id}] {node.action}({node.action_input[:60]}) -> {what[:100]}",
                  file=sys.stderr)
    return ask(args.video_id, args.question, settings, options=options, n_solutions=args.n,
               document=document, on_step=show).as_dict()


def _setup(args, settings) -> dict:
    """Assemble the offline model files once (verified by sha256) so the first ingest is quick."""
    from models import weights

    prepared = {"whisper-base": weights.whisper_base_dir(settings.cache_dir)}
    for size in ("1.5b", "0.5b"):
        prepared[f"qwen2.5-coder-{size}"] = weights.qwen_gguf(settings.cache_dir, size)
    return {name: str(path) for name, path in prepared.items()}


def _bench_ingest(args, settings) -> dict:
    from backend import bench

    return bench.ingest_bench(Path(args.path), settings, repeat=args.repeat)


def _bench_agent(args, settings) -> dict:
    from backend import bench

    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    return bench.agent_bench(Path(args.questions), Path(args.videos), settings,
                             n_solutions=args.n, limit=args.limit, progress=say)


def _print_text(command: str, payload: dict) -> None:
    if command == "ingest":
        state = "already in the library" if payload["cached"] else "ingested"
        print(f"{payload['name']}: {state} as {payload['video_id']}")
        print("  rows: " + ", ".join(f"{k} {v}" for k, v in payload["counts"].items()))
        print("  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in payload["seconds"].items()))
    elif command == "info" and "videos" in payload:
        if not payload["videos"]:
            print(f"The library at {payload['home']} is empty. Add a video: python -m backend ingest PATH")
        for v in payload["videos"]:
            print(f"{v['video_id']}  {v['duration']:8.1f} s  {v['ingested_at']}  {v['name']}")
    elif command == "ask":
        if payload["options"] and payload["option"] is not None:
            print(f"answer: {payload['option']} ({payload['answer']})")
        else:
            print(f"answer: {payload['answer']}")
        for step in payload["evidence"]:
            times = ", ".join(f"{t:g} s" for t in step["times"][:8])
            print(f"  {step['tool']}({step['input']}): {step['observation'][:160]}"
                  + (f" [at {times}]" if times else ""))
        u = payload["usage"]
        print(f"  {u['llm_calls']} LLM calls, {u['prompt_tokens']} prompt + "
              f"{u['completion_tokens']} completion tokens, {u['llm_seconds']} s in the LLM, "
              f"{u['other_seconds']} s outside; {len(payload['tree'])} tree nodes")
    elif command == "sql":
        print(" | ".join(payload["columns"]))
        for row in payload["rows"]:
            print(" | ".join("" if v is None else str(v) for v in row))
        if payload["truncated"]:
            print("... (more rows; limit MEMORYREEL_SQL_MAX_ROWS)")
    elif command == "bench" and "accuracy" in payload:
        u = payload["per_answer"]
        print(f"accuracy {payload['correct']}/{payload['questions']} = {payload['accuracy']:.0%}; "
              f"per answer: {u['llm_calls']} LLM calls, {u['prompt_tokens']} prompt + "
              f"{u['completion_tokens']} completion tokens, {u['llm_seconds']} s in the LLM, "
              f"{u['other_seconds']} s outside")
    else:
        print(json.dumps(payload, indent=2, default=str))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m backend", description=__doc__)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    common.add_argument("--quiet", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", parents=[common], help="add a video to the library")
    p.add_argument("path")
    p.set_defaults(run=_ingest)

    p = sub.add_parser("info", parents=[common], help="list the library, or one video's facts")
    p.add_argument("video_id", nargs="?")
    p.set_defaults(run=_info)

    p = sub.add_parser("sql", parents=[common], help="run a read-only SELECT on a video's tables")
    p.add_argument("video_id")
    p.add_argument("query")
    p.set_defaults(run=_sql)

    p = sub.add_parser("ask", parents=[common], help="ask a question about a video")
    p.add_argument("video_id")
    p.add_argument("question")
    p.add_argument("--options", help="multiple choice: options separated by '|'")
    p.add_argument("--n", type=int, help="planner solutions (default MEMORYREEL_N_SOLUTIONS)")
    p.add_argument("--document", help="a text file the agent may search as background knowledge")
    p.set_defaults(run=_ask)

    p = sub.add_parser("setup", parents=[common], help="prepare offline model files (run by make)")
    p.set_defaults(run=_setup)

    p = sub.add_parser("bench", parents=[common], help="benchmarks that print figures")
    bench_sub = p.add_subparsers(dest="bench", required=True)
    b = bench_sub.add_parser("ingest", parents=[common], help="stage seconds, realtime factor, peak RSS")
    b.add_argument("path")
    b.add_argument("--repeat", type=int, default=4, help="length multiple for the RSS ratio (default 4)")
    b.set_defaults(run=_bench_ingest)
    b = bench_sub.add_parser("agent", parents=[common], help="accuracy and cost on a QA file")
    b.add_argument("--questions", default=str(_SHARED / "eval" / "dev-qa.csv"))
    b.add_argument("--videos", default=str(_SHARED / "videos"))
    b.add_argument("--n", type=int, help="planner solutions (default MEMORYREEL_N_SOLUTIONS)")
    b.add_argument("--limit", type=int, help="only the first N questions")
    b.set_defaults(run=_bench_agent)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    settings = config.load()
    try:
        payload = args.run(args, settings)
    except MemoryReelError as e:
        if args.json:
            print(json.dumps({"error": str(e), "kind": type(e).__name__}))
        else:
            print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(payload, default=str))
    else:
        _print_text(args.command, payload)
    return 0
