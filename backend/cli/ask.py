"""The `ask` command of the command line: one question about one video, or, with --all-videos,
about every video in the library.

Kept apart from backend/cli/__init__.py, which parses arguments and reports failures for every command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from backend.errors import InputError, UsageError
from backend.inputs import (MAX_SOLUTIONS, MIN_SOLUTIONS, check_question, check_solutions,
                            parse_options)


def solutions(text: str) -> int:
    """--n: the number of candidate answers, in the range the app offers."""
    try:
        return check_solutions(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


SOLUTIONS_HELP = (f"planner solutions, {MIN_SOLUTIONS}-{MAX_SOLUTIONS} "
                  "(default MEMORYREEL_N_SOLUTIONS)")


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ask", parents=[common], help="ask a question about a video, or with "
                                                     "--all-videos about the whole library")
    # Both optional to argparse, so that what is missing is named for either form of the command.
    p.add_argument("video_id", metavar="VIDEO_ID", nargs="?",
                   help="the video (left out with --all-videos)")
    p.add_argument("question", nargs="?")
    p.add_argument("--all-videos", action="store_true",
                   help="ask across every video in the library: the answer names videos and times")
    p.add_argument("--options", help="multiple choice: two or more options separated by '|'")
    p.add_argument("--n", type=solutions, help=SOLUTIONS_HELP)
    p.add_argument("--document", help="a text file the agent may search as background knowledge")
    p.add_argument("--session", help="chat name: earlier turns of it are short-term memory, and "
                                     "this turn is added to it")
    p.add_argument("--no-memory", action="store_true", help="neither replay nor learn")
    p.set_defaults(run=ask_command, render=print_ask)


def ask_command(args, settings) -> dict:
    from backend.memory import sessions
    from backend.memory.replay import MemoryOptions

    if args.all_videos:
        return _ask_library(args, settings)
    if args.question is None:
        missing = "the QUESTION" if args.video_id else "a VIDEO_ID and a QUESTION"
        raise UsageError(f"ask needs {missing}: python -m backend ask VIDEO_ID \"QUESTION\" (or "
                         f"--all-videos \"QUESTION\").")
    from backend.ask import ask

    # Checked before the library or a model is touched, with the app's own rules.
    check_question(args.video_id, args.question)
    options = parse_options(args.options)
    document = (Path(args.document).name, Path(args.document).read_text()) if args.document else None
    history = sessions.load(settings, args.session) if args.session else None
    answer = ask(args.video_id, args.question, settings, options=options, n_solutions=args.n,
                 document=document, history=history, on_step=_shower(args),
                 memory=MemoryOptions.off() if args.no_memory else None)
    if args.session:
        sessions.append(settings, args.session, args.question, answer.answer)
    return answer.as_dict()


def _ask_library(args, settings) -> dict:
    from backend.ask_library import ask_library

    if args.video_id is None:
        raise UsageError("the QUESTION is missing: --all-videos asks it of every video "
                         "(python -m backend ask --all-videos \"QUESTION\").")
    if args.question is not None:
        raise UsageError("with --all-videos, give only the QUESTION (no VIDEO_ID).")
    if args.document or args.session:
        raise UsageError("--document and --session are for one video's chat, not --all-videos.")
    question = args.video_id  # the one positional given is the question
    check_question("library", question)
    answer = ask_library(question, settings, options=parse_options(args.options),
                         n_solutions=args.n, on_step=_shower(args))
    return answer.as_dict()


def _shower(args):
    def show(node) -> None:
        if not (args.json or args.quiet):
            what = node.failure or node.answer or node.observation
            print(f"  [{node.id}] {node.action}({node.action_input[:60]}) -> {what[:100]}",
                  file=sys.stderr)
    return show


def print_ask(payload: dict) -> None:
    """The answer, then why: confidence, evidence steps, the videos named, memory, cost."""
    if payload["options"] and payload["option"] is not None:
        print(f"answer: {payload['option']} ({payload['answer']})")
    else:
        print(f"answer: {payload['answer']}")
    c = payload.get("confidence") or {}
    if c.get("level") not in (None, "none"):
        print(f"  confidence {c['level']}: {c['explanation']}")
    for video in payload.get("videos", []):
        times = ", ".join(f"{t:g} s" for t in video["times"][:8])
        print(f"  video {video['name']} ({video['video_id']})" + (f" at {times}" if times else ""))
    for step in payload["evidence"]:
        times = ", ".join(f"{t:g} s" for t in step["times"][:8])
        print(f"  {step['tool']}({step['input']}): {step['observation'][:160]}"
              + (f" [at {times}]" if times else ""))
        if step.get("sql"):
            print(f"    SQL: {step['sql'][:200]}")
    _print_answer_memory(payload["memory"])
    u = payload["usage"]
    print(f"  {u['llm_calls']} LLM calls, {u['prompt_tokens']} prompt ({u['cached_tokens']} "
          f"from the server's cache) + {u['completion_tokens']} completion tokens, "
          f"{u['llm_seconds']} s in the LLM ({u['prompt_seconds']} s reading prompts), "
          f"{u['other_seconds']} s outside; {len(payload['tree'])} tree nodes")


def _print_answer_memory(m: dict) -> None:
    """What an answer replayed and learned, when memory was on."""
    if not m.get("enabled"):
        return
    rating = (f"P {m['p']}" if m.get("rated", True) else
              "P not asked: no step needed it")
    print(f"  memory: {m['task_type'] or 'unrated'} question, C(q) {m['complexity']} "
          f"({rating}, E {m['e']} bits), k_s {m['k_s']}, k_p {m['k_p']}; replayed "
          f"{len(m['replayed'])}")
    for r in m["replayed"]:
        similarity = "" if r["similarity"] is None else f" {r['similarity']:.2f}"
        print(f"    [{r['kind']}{similarity}] {r['text'][:120]}")
    learned = m.get("learned", {})
    if learned:
        print(f"  learned: {learned['verdict']} ({learned['reason'][:120]})")
