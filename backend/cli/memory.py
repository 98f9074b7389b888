"""`memory`: list, show, search, delete and export long-term memory, and distill the checked
facts into the small model's weights (parametric memory).

Kept apart from backend/cli/__init__.py, which parses arguments and reports failures for every command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from backend.cli.bench import print_json
from backend.errors import InputError
from backend.inputs import check_text


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("memory", parents=[common], help="inspect semantic, procedural and "
                                                        "episodic memory")
    p.add_argument("action", choices=["list", "show", "search", "delete", "export", "distill"])
    p.add_argument("target", nargs="?", help="entry id (show, delete), text (search), "
                                             "file (export, default memory-export.jsonl)")
    p.add_argument("--type", choices=["semantic", "procedural", "pattern", "episodic"])
    p.add_argument("--video", help="only this video's entries (needed for episodic)")
    p.add_argument("--k", type=int, default=10, help="search: most entries returned")
    p.add_argument("--all", action="store_true",
                   help="distill: every video's checked facts (the default without --video)")
    p.add_argument("--steps", type=int, help="distill: training steps (default: four passes "
                                             "over the pairs, at least 20)")
    p.add_argument("--base", choices=["0.5b"], default="0.5b",
                   help="distill: the model the adapter is trained on")
    p.set_defaults(run=memory, render=print_memory)


def memory(args, settings) -> dict:
    from backend.memory.store import MemoryStore

    store = MemoryStore(settings)
    if args.action in ("show", "search", "delete") and not args.target:
        what = "some text to search for" if args.action == "search" else "an entry id"
        raise InputError(f"memory {args.action} needs {what}.")
    if args.action == "search":
        check_text(args.target, "The search text")
    if args.action == "distill":
        return _distill(args, settings, store)
    if args.action == "list":
        return {"entries": [e.as_dict() for e in store.list(kind=args.type, video_id=args.video)]}
    if args.action == "show":
        return store.get(args.target).as_dict()
    if args.action == "search":
        return {"entries": [e.as_dict() for e in store.search(args.target, kind=args.type,
                                                              video_id=args.video, k=args.k)]}
    if args.action == "delete":
        store.delete(args.target)
        return {"deleted": args.target}
    entries = store.list(kind=args.type, video_id=args.video)
    out = Path(args.target or "memory-export.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for entry in entries:
            f.write(json.dumps(entry.as_dict(), default=str) + "\n")
    return {"exported": len(entries), "path": str(out.resolve())}


def _distill(args, settings, store) -> dict:
    from backend.memory import parametric

    if args.all and args.video:
        raise InputError("memory distill takes --video ID or --all, not both.")
    parametric.check_steps(args.steps)
    bar = tqdm(desc="distilling", unit="step", file=sys.stderr, disable=args.json)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        done = parametric.distill(settings, [args.video] if args.video else None, args.steps,
                                  args.base, progress=progress, store=store)
    finally:
        bar.close()
    return {"distilled": done.as_dict(), "adapter": str(parametric.adapter_path(settings))}


def print_memory(payload: dict) -> None:
    """Entries (list, search), a few lines each; show, delete and export stay JSON."""
    if "entries" not in payload:
        print_json(payload)
        return
    if not payload["entries"]:
        print("No memory entries match.")
    for e in payload["entries"]:
        similarity = f" sim {e['similarity']:.2f}" if e.get("similarity") is not None else ""
        where = f" video {e['video_id']}" if e.get("video_id") else ""
        times = f" at {', '.join(f'{t:g}' for t in e['times'][:4])} s" if e.get("times") else ""
        print(f"{e['id']}  [{e['kind']}{'/' + e['task_type'] if e.get('task_type') else ''}]"
              f"{where}{times}  replayed {e['replays']}x{similarity}")
        if e.get("question"):
            print(f"    Q: {e['question']}")
        print(f"    {e['text'][:300]}")
