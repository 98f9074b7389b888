"""`python -m backend ...`: the command line. With --json, each command prints one JSON object.

Errors a user can act on exit with status 2 and a one-line message (as JSON with --json).
With --json, every failure is `{"error": ..., "kind": ...}` with status 2, and nothing else
reaches stdout: while the command runs, file descriptor 1 points at stderr, so banners printed
by libraries (ultralytics announces its settings file on first use) or native code cannot
corrupt the JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shlex
import sys
from pathlib import Path

from tqdm import tqdm

from backend import config
from backend.cli.bench import (SHARED, bench_agent, bench_detectors, bench_ingest,
                                bench_measurements, bench_memory, bench_objects, bench_retrieval,
                                bench_tracking, print_agent_bench, print_detectors_bench,
                                print_ingest_bench, print_json, print_measurements,
                                print_memory_bench, print_objects_bench, print_retrieval_bench,
                                print_tracking_bench)
from backend.cli.bench_perception import (bench_actions, bench_appearance, bench_tags,
                                          print_actions_bench, print_appearance_bench,
                                          print_tags_bench)
from backend.cli import setup
from backend.cli.ask import SOLUTIONS_HELP, solutions
from backend.cli.ask import add_parser as add_ask_parser
from backend.cli.export import add_parser as add_export_parser
from backend.cli.ingest import add_parser as add_ingest_parser
from backend.cli.interrupt import handled as ctrl_c_handled
from backend.cli.memory import add_parser as add_memory_parser
from backend.errors import MemoryReelError, QueryError, UsageError
from backend.inputs import check_text
from models.errors import ModelError

log = logging.getLogger(__name__)



def _info(args, settings) -> dict:
    from backend.library import Library

    library = Library(settings.home)
    if args.video_id:
        return library.get(args.video_id).info()
    payload = {"home": str(settings.home.resolve()), "videos": [
        {"video_id": e.video_id, "name": e.name, "duration": round(e.duration, 2),
         "ingested_at": e.ingested_at} for e in library.list()]}
    if damaged := library.damaged():
        payload["damaged"] = [{**d, "repair": "ingest its file again"} for d in damaged]
    return payload


def _print_info(payload: dict) -> None:
    """The library, one video a line; one video's facts (`info VIDEO_ID`) stay JSON."""
    if "videos" not in payload:
        print_json(payload)
        return
    if not payload["videos"]:
        print(f"The library at {payload['home']} is empty. Add a video: python -m backend ingest PATH")
    for v in payload["videos"]:
        print(f"{v['video_id']}  {v['duration']:8.1f} s  {v['ingested_at']}  {v['name']}")
    for d in payload.get("damaged", []):
        print(f"{d['video_id']}  damaged ({d['reason']}): ingest its file again to repair it")


def _sql(args, settings) -> dict:
    from backend.library import Library
    from backend.sql_runner import run_query

    check_text(args.query, "The SQL query", QueryError)
    entry = Library(settings.home).get(args.video_id)
    result = run_query(entry.db_path, args.query, timeout_s=settings.sql_timeout_s,
                       max_rows=settings.sql_max_rows)
    return {"video_id": entry.video_id, "columns": result.columns,
            "rows": [list(r) for r in result.rows], "truncated": result.truncated,
            "seconds": round(result.seconds, 4)}


def _print_sql(payload: dict) -> None:
    print(" | ".join(payload["columns"]))
    for row in payload["rows"]:
        print(" | ".join("" if v is None else str(v) for v in row))
    if payload["truncated"]:
        print("... (more rows; limit MEMORYREEL_SQL_MAX_ROWS)")


def _workload(args, settings) -> dict:
    from backend.evaluation.workload import make_external_workload, make_workload, video_files

    if args.library:
        from backend.evaluation import library_workload

        return library_workload.run(settings, Path(args.out), seed=args.seed)
    if args.descriptive:
        from backend.evaluation.descriptive import make_descriptive_workload

        return make_descriptive_workload(Path(args.videos or SHARED / "videos"), Path(args.out),
                                         settings, count=args.count, seed=args.seed)
    if args.external_only:
        from backend.evaluation import scenes, tracking

        sequences = (scenes.every_scene(SHARED / "videos") if args.videos is None
                     else tracking.find_sequences(Path(args.videos)))
        return make_external_workload(sequences, Path(args.out), settings, count=args.count,
                                      seed=args.seed)
    args.videos = args.videos or str(SHARED / "videos")

    bar = tqdm(total=len(video_files(Path(args.videos))), desc="videos", unit="video",
               file=sys.stderr, disable=args.json or args.quiet)

    def progress(name: str) -> None:
        bar.set_postfix_str(name)
        bar.update()
    try:
        return make_workload(Path(args.videos), Path(args.out), settings, count=args.count,
                             seed=args.seed, progress=progress)
    finally:
        bar.close()


def _print_workload(payload: dict) -> None:
    if "wrong_videos_named" in payload:
        print(f"{payload['questions']} library questions over {payload['videos']} videos: "
              f"{payload['right']} right, {payload['wrong_videos_named']} wrong videos named, "
              f"{payload['videos_missed']} missed; written to {payload['out']}")
        for need, n in payload["needs"].items():
            print(f"  {need}: {n['right']}/{n['questions']}")
        return
    print(f"{payload['questions']} questions (seed {payload['seed']}) written to {payload['out']}")
    for label in ("videos", "needs", "truth", "halves"):
        if label in payload:
            print(f"  {label}: " + ", ".join(f"{k} {v}" for k, v in payload[label].items()))
    if "videos_folder" in payload:
        print(f"  videos linked in {payload['videos_folder']} (eval --videos)")
    for s in payload["skipped"]:
        print(f"  skipped {s['video']}: {s['reason']}")


def _eval(args, settings) -> dict:
    from backend.evaluation.ablation import run_ablation
    from backend.evaluation.runner import RunConfig, run_eval

    config = RunConfig(memory=args.memory, n_solutions=args.n, replay=args.replay, seed=args.seed,
                       limit=args.limit)
    name = "ablation" if args.ablation else config.slug()
    out = Path(args.out) if args.out else settings.home / "evaluations" / f"{Path(args.questions).stem}_{name}"
    # The run's options spelled out, so the docs show a command that repeats it exactly.
    words = [args.questions, "--videos", args.videos, "--memory", args.memory, "--replay",
             args.replay, "--seed", str(args.seed), "--out", str(out)]
    words += ["--n", str(args.n)] if args.n else []
    words += ["--limit", str(args.limit)] if args.limit else []
    words += ["--video-map", args.video_map] if args.video_map else []
    words += ["--ablation"] if args.ablation else []
    size = f"MEMORYREEL_LLM_SIZE={settings.llm_size} " if settings.llm_size != "1.5b" else ""
    say = (lambda line: None) if (args.json or args.quiet) else (lambda line: print(line, file=sys.stderr))
    kwargs = dict(video_map=Path(args.video_map) if args.video_map else None, resume=args.resume,
                  keep_memory=args.keep_memory, progress=say,
                  command=f"{size}python -m backend eval {shlex.join(words)}")
    if args.ablation:
        return run_ablation(Path(args.questions), Path(args.videos), out, settings, config, **kwargs)
    return run_eval(Path(args.questions), Path(args.videos), out, settings, config, **kwargs)


def _print_eval(payload: dict) -> None:
    """An ablation's table, or one run's accuracy and cost."""
    if "rows" in payload:
        print(payload["table"])
        print(f"written to {payload['folder']}/ablation.md")
        return
    from backend.evaluation.report import text_summary
    print(text_summary(payload))


def _eval_report(args, settings) -> dict:
    from backend.evaluation.report import evaluation_markdown

    command = f"python -m backend eval-report {shlex.join(args.run_dirs)} --output {args.output}"
    output = Path(args.output)
    text = evaluation_markdown([Path(d) for d in args.run_dirs], command, output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    return {"output": str(output), "runs": args.run_dirs}


def _print_eval_report(payload: dict) -> None:
    print(f"wrote {payload['output']} from {len(payload['runs'])} run folder(s)")


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting, so that --json can
    report it like any other failure; sub-commands' parsers are of this class too.

    Abbreviations are off: a prefix of an option is an error, not that option (argparse took
    `--js` for `--json`, but `main` did not, and printed human text)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        usage = " ".join(self.format_usage().split()).removeprefix("usage: ")
        raise UsageError(f"{message} (usage: {usage})")

    def _parse_optional(self, arg_string: str):
        # An existing file whose name starts with '-' (`ingest -x.mp4`) is an argument, not an
        # option, so it needs no `--` before it.
        if (arg_string.startswith("-") and arg_string not in self._option_string_actions
                and len(arg_string) > 1 and os.path.exists(arg_string)):
            return None
        return super()._parse_optional(arg_string)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m backend", description=__doc__)
    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    common.add_argument("--quiet", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="command", required=True)

    add_ingest_parser(sub, common)

    p = sub.add_parser("info", parents=[common], help="list the library, or one video's facts")
    p.add_argument("video_id", nargs="?")
    p.set_defaults(run=_info, render=_print_info)

    p = sub.add_parser("sql", parents=[common], help="run a read-only SELECT on a video's tables")
    p.add_argument("video_id")
    p.add_argument("query")
    p.set_defaults(run=_sql, render=_print_sql)

    add_ask_parser(sub, common)
    add_export_parser(sub, common)

    add_memory_parser(sub, common)

    p = sub.add_parser("eval", parents=[common],
                       help="accuracy per question type with 95%% CIs, cost, ablations")
    p.add_argument("questions", help="NExT-QA, IntentQA, MSRVTT-QA or dev-qa layout (.csv/.json/.jsonl)")
    p.add_argument("--videos", default=str(SHARED / "videos"), help="folder of the video files")
    p.add_argument("--video-map", help="CSV (header, then id,file) or JSON {id: file} for "
                                       "files not named by the question file's video ids")
    p.add_argument("--limit", type=int, help="only the first N questions of the seeded order")
    p.add_argument("--memory", choices=["off", "semantic", "procedural", "all"], default="all")
    p.add_argument("--n", type=solutions, help=SOLUTIONS_HELP)
    p.add_argument("--replay", default="dynamic", help="dynamic (default) or fixed:KS,KP")
    p.add_argument("--seed", type=int, default=0, help="seed of the question order (default 0)")
    p.add_argument("--out", help="run folder (default MEMORYREEL_HOME/evaluations/<file>_<options>)")
    p.add_argument("--resume", action="store_true", help="finish the run in --out")
    p.add_argument("--keep-memory", action="store_true",
                   help="start from the memory already in --out instead of empty memory")
    p.add_argument("--ablation", action="store_true",
                   help="memory, N and replay ablations, one factor at a time from these options")
    p.set_defaults(run=_eval, render=_print_eval)

    p = sub.add_parser("eval-report", parents=[common],
                       help="write docs/EVALUATION.md from run folders' results.jsonl")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--output", default="docs/EVALUATION.md")
    p.set_defaults(run=_eval_report, render=_print_eval_report)

    p = sub.add_parser("workload", parents=[common],
                       help="generate a long multiple-choice question workload over a folder of videos")
    p.add_argument("--videos", help="folder of videos (default ../shared/videos); MOT ground truth "
                                     "below it answers questions about people")
    p.add_argument("--external-only", action="store_true",
                   help="only questions whose truth is MOT ground truth: every sequence under "
                        "--videos (default: every scene in ../shared/videos/ground-truth and "
                        "ground-truth-wide) and its footage variants, counts with options one "
                        "or two apart, a tuning and a reporting half by scene (columns `half`, "
                        "`scene`); the videos are linked into videos/ beside --out")
    p.add_argument("--descriptive", action="store_true",
                   help="descriptive questions (which kinds, what colour, where the text is, "
                        "which object, the word said), truth from each video's tables, "
                        "paraphrased options, a tuning and a reporting half (column `half`)")
    p.add_argument("--library", action="store_true",
                   help="questions across the library (which videos show a kind, N people at "
                        "once, say a word), truth from the tables; asks them and scores the "
                        "videos named")
    p.add_argument("--out", required=True, help="CSV to write (dev-qa layout plus truth, need)")
    p.add_argument("--count", type=int, default=120, help="questions in all (default 120)")
    p.add_argument("--seed", type=int, default=0, help="seed of the questions and their order")
    p.set_defaults(run=_workload, render=_print_workload)

    p = sub.add_parser("setup", parents=[common], help="prepare offline model files (run by make)")
    p.set_defaults(run=setup.run, render=print_json)

    p = sub.add_parser("bench", parents=[common], help="benchmarks that print figures")
    bench_sub = p.add_subparsers(dest="bench", required=True)
    b = bench_sub.add_parser("ingest", parents=[common], help="stage seconds, realtime factor, peak RSS")
    b.add_argument("path", help="a video; with --workers or --ray, a folder of videos")
    b.add_argument("--workers", metavar="N,N", help="ingest the folder once per worker count, "
                                                    "side by side, e.g. 1,2")
    b.add_argument("--ray", metavar="ADDRESS", help="and once through Ray, e.g. local")
    b.add_argument("--repeat", type=int, default=4, help="length multiple for the RSS ratio (default 4)")
    b.add_argument("--vary", metavar="SETTING=A,B",
                   help="ingest PATH once per value of this setting instead, side by side, e.g. "
                        "DETECTOR_RUNTIME=onnx,torch; settings joined by commas take each value "
                        "together, e.g. PLACES,ACTIVITIES=0,1")
    b.add_argument("--rounds", type=int, default=1, help="with --vary: alternating rounds (default 1)")
    b.add_argument("--join", type=float, default=0.0, metavar="MINUTES",
                   help="set PATH's peak RSS against the shared clips beside it joined into one "
                        "video this long (e.g. 30) instead of PATH repeated")
    b.add_argument("--warm", action="store_true",
                   help="and PATH once more in a process whose models another video loaded: "
                        "what the app's every upload after its first costs")
    b.set_defaults(run=bench_ingest, render=print_ingest_bench)
    qa = _Parser(add_help=False)
    qa.add_argument("--questions", default=str(SHARED / "eval" / "dev-qa.csv"))
    qa.add_argument("--videos", default=str(SHARED / "videos"))
    qa.add_argument("--n", type=solutions, help=SOLUTIONS_HELP)
    qa.add_argument("--limit", type=int, help="only the first N questions")
    b = bench_sub.add_parser("agent", parents=[common, qa], help="accuracy and cost on a QA file")
    b.add_argument("--agents", default="grounded,sql",
                   help="agents to run side by side, comma-separated (MEMORYREEL_AGENT values)")
    b.add_argument("--vary", action="append", default=[], metavar="SETTING=A,B",
                   help="also run each agent with each value of a setting, side by side, in a "
                        "library of its own (repeatable; 'A=1;B=2' is one run with both), e.g. "
                        "'ANSWER_CHECKS=0;DETECTOR_MAX_IMGSZ=640' for the agent before #21")
    b.add_argument("--half", choices=["tune", "report"],
                   help="only that half of a workload (`workload --external-only` marks them)")
    b.add_argument("--markdown", metavar="FILE",
                   help="also write the figures as a markdown table (a section.md for eval-report)")
    b.add_argument("--from-json", metavar="FILE",
                   help="re-make the table (and --markdown) from a kept --json output; asks nothing")
    b.set_defaults(run=bench_agent, render=print_agent_bench)
    b = bench_sub.add_parser("memory", parents=[common, qa],
                             help="accuracy and cost per memory configuration over one question "
                                  "order (--questions: a workload from `workload`)")
    b.add_argument("--configs", default="off,semantic,procedural,both",
                   help="memory configurations to run, comma-separated: off, semantic, "
                        "procedural, both, both+parametric (distils halfway; default the first "
                        "four)")
    b.add_argument("--jsonl", help="write one line per answer per configuration, as it goes")
    b.add_argument("--chart", help="plotly chart of calls per answer against question index (.html)")
    b.add_argument("--markdown", metavar="FILE",
                   help="also write the figures as a markdown table (a section.md for "
                        "eval-report)")
    b.add_argument("--from-jsonl", metavar="FILE",
                   help="re-make the summary (and --chart) from a kept --jsonl file; asks nothing")
    b.set_defaults(run=bench_memory, render=print_memory_bench)
    b = bench_sub.add_parser("tracking", parents=[common],
                             help="MOT metrics and people counts against MOTChallenge ground truth")
    b.add_argument("--sequence", action="append", default=[], metavar="DIR",
                   help="a MOT-layout folder (gt.txt, seqinfo.ini); default: every scene under "
                        "../shared/videos/ground-truth and ground-truth-wide")
    b.add_argument("--vary", action="append", default=[], metavar="SETTING=A,B",
                   help="also run with each value of a setting, side by side (repeatable)")
    b.add_argument("--write", action="store_true",
                   help="write the crowd factor (people there per person seen in a crowd) of "
                        "the tuning half's scenes to backend/agent/crowd_count.json")
    b.add_argument("--variants", nargs="?", const="all", metavar="NAMES",
                   help="also score variants of each sequence whose truth follows exactly "
                        "(0.5x, 0.35x, mirrored, dark, half-fps, low-bitrate; all unless NAMES, "
                        "comma-separated, where pan may be named too), made once into "
                        "MEMORYREEL_CACHE")
    b.set_defaults(run=bench_tracking, render=print_tracking_bench)
    b = bench_sub.add_parser("objects", parents=[common],
                             help="the COCO object detector beside the person detector: ms a "
                                  "frame and what it finds per kind")
    b.add_argument("videos", nargs="*", metavar="VIDEO",
                   help="clips (default: the highway, bottle and car clips in ../shared/videos)")
    b.set_defaults(run=bench_objects, render=print_objects_bench)
    b = bench_sub.add_parser("detectors", parents=[common],
                             help="COCO object detectors scored kind by kind on images with real "
                                  "boxes (precision, recall, box counts; cars from above apart) "
                                  "and timed, side by side")
    b.add_argument("--candidates", help="comma-separated (default: nanodet,yolo11n,yolo26n)")
    b.add_argument("--truth", help="the object truth folder (default "
                                   "../shared/images/objects-truth)")
    b.add_argument("--limit", type=int, help="only the first N images of each set")
    b.add_argument("--write", action="store_true",
                   help="write the default detector's precision per kind and size to "
                        "backend/agent/object_precision.json and the table of kinds in docs/PERCEPTION.md")
    b.set_defaults(run=bench_detectors, render=print_detectors_bench)
    b = bench_sub.add_parser("actions", parents=[common],
                             help="actions, tags and indoors/outdoors scored on the human "
                                  "captions of COCO images (precision and recall per action, "
                                  "on a tuning and a reporting half)")
    b.add_argument("--truth", help="the object truth folder holding coco_val2017_first128 "
                                   "(default ../shared/images/objects-truth)")
    b.add_argument("--limit", type=int, default=0, help="only the first N images")
    b.add_argument("--write", action="store_true",
                   help="write the measured precision per action (or, with --clips, of code's "
                        "picks per evidence they rest on) to "
                        "backend/agent/action_precision.json (the confidence contract)")
    b.add_argument("--clips", metavar="MANIFEST", nargs="+",
                   help="score sets of labelled action clips instead: per set a CSV (file, "
                        "label, dataset, repo, repo_path, ...) beside its clips; each clip is "
                        "ingested once into MEMORYREEL_CACHE/action-clips-library; with --write, "
                        "the tuning halves' picks go to the contract")
    b.add_argument("--questions", metavar="CSV",
                   help="with --clips: also write each clip's five-option 'what activity is "
                        "shown' question, for `eval`")
    b.set_defaults(run=bench_actions, render=print_actions_bench)
    b = bench_sub.add_parser("appearance", parents=[common],
                             help="colours of people's clothes and of objects against the COCO "
                                  "captions' colour words, and positions and directions against "
                                  "MOT truth (tuning and reporting halves)")
    b.add_argument("--truth", help="the object truth folder holding coco_val2017_first128 "
                                   "(default ../shared/images/objects-truth)")
    b.add_argument("--limit", type=int, default=0, help="only the first N images")
    b.add_argument("--no-places", action="store_true",
                   help="colours only: skip tracking the MOT scenes")
    b.add_argument("--colour-set", metavar="MANIFEST",
                   help="also score a colour-labelled image set: a CSV (file, part: upper, "
                        "lower or vehicle, colour, dataset, ...) beside the images, each "
                        "showing a single pedestrian or vehicle")
    b.set_defaults(run=bench_appearance, render=print_appearance_bench)
    b = bench_sub.add_parser("tags", parents=[common],
                             help="ImageNet taggers timed on one thread and checked against the "
                                  "human captions of COCO images, side by side")
    b.add_argument("--candidates", help="comma-separated (default: lite0,lite2)")
    b.add_argument("--truth", help="the object truth folder, whose COCO set has captions.json "
                                   "(default ../shared/images/objects-truth)")
    b.add_argument("--limit", type=int, help="only the first N images")
    b.set_defaults(run=bench_tags, render=print_tags_bench)
    b = bench_sub.add_parser("measurements", parents=[common],
                             help="how often each computed people measurement is right on MOT "
                                  "truth and its variants, per condition (the table behind "
                                  "high confidence)")
    b.add_argument("--count", type=int, default=400,
                   help="external-only workload questions drawn (default 400)")
    b.add_argument("--variants", default="all", metavar="NAMES",
                   help="the footage variants of each scene asked about: all (default), none, "
                        "or comma-separated names (0.5x, 0.35x, mirrored, dark, half-fps, "
                        "low-bitrate, pan); scenes, not variants, are the unit of independence")
    b.add_argument("--write", action="store_true",
                   help="write the tuning half to backend/agent/measured_precision.json")
    b.set_defaults(run=bench_measurements, render=print_measurements)
    b = bench_sub.add_parser("retrieval", parents=[common],
                             help="vector search (LanceDB, numpy) and graph PageRank")
    b.add_argument("--rows", type=int, default=100_000, help="synthetic memory rows (default 100000)")
    b.add_argument("--queries", type=int, default=200, help="queries timed (default 200)")
    b.add_argument("--graph-edges", default="10000,100000", help="graph sizes for PageRank")
    b.add_argument("--graph-questions", type=int, default=20, help="questions per graph size")
    b.set_defaults(run=bench_retrieval, render=print_retrieval_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    json_mode = "--json" in argv
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = None
    try:
        with ctrl_c_handled(), _stdout_to_stderr(json_mode), _quiet_libraries("--quiet" in argv):
            args = build_parser().parse_args(argv)
            settings = config.load()
            config.third_party_environment(settings)
            payload = args.run(args, settings)
    except KeyboardInterrupt:
        return _report_interrupt(json_mode, args)
    except Exception as e:  # noqa: BLE001 - every failure becomes one message, status 2
        return _report_failure(e, json_mode, argv)
    if json_mode:
        print(json.dumps(payload, default=str))
    else:
        args.render(payload)
    # A command whose every part failed says so in its status too (a script checks that).
    return args.status(payload) if hasattr(args, "status") else 0


def _report_failure(error: Exception, json_mode: bool, argv: list[str]) -> int:
    if isinstance(error, UsageError) and not json_mode:
        print(f"python -m backend: error: {error}", file=sys.stderr)
        return 2
    if not _expected(error):
        # A bug, not a user error: the traceback goes to stderr (and the JSON still comes).
        if not json_mode:
            raise error
        log.error("unexpected failure of `%s`", shlex.join(argv), exc_info=error)
    message = str(error) or type(error).__name__
    if json_mode:
        print(json.dumps({"error": message, "kind": type(error).__name__}))
    else:
        print(f"error: {message}", file=sys.stderr)
    return 2


def _report_interrupt(json_mode: bool, args: argparse.Namespace | None) -> int:
    """Ctrl-C is the user's choice, not a failure: one line saying so (JSON with --json), no
    traceback, and the shell's status for a SIGINT. What the command was writing is cleaned up
    as on any failure (an ingest's staging folder is removed as the interrupt unwinds)."""
    words = [getattr(args, "command", None), getattr(args, "action", None)]  # memory's action
    command = " ".join(w for w in words if isinstance(w, str)) or "the command"
    message = f"Interrupted (Ctrl-C): `{command}` stopped before it finished."
    if json_mode:
        print(json.dumps({"error": message, "kind": "Interrupted"}))
    else:
        print(message, file=sys.stderr)
    return 130


def _expected(error: Exception) -> bool:
    """Errors whose message tells the user what to do: the backend's and the models'."""
    return isinstance(error, (MemoryReelError, ModelError))


# Read when each library loads: transformers draws a bar as it loads weights, ultralytics
# announces every detector, LanceDB warns that it creates a new table.
_LIBRARY_CHATTER_OFF = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "YOLO_VERBOSE": "false",
                        "LANCEDB_LOG": "error"}


@contextlib.contextmanager
def _quiet_libraries(active: bool):
    """While active, the libraries' own progress bars and notices are off (what the user set
    stays); the environment is as it was afterwards, for a caller that runs `main` in-process."""
    chosen = {k: v for k, v in _LIBRARY_CHATTER_OFF.items() if k not in os.environ} if active else {}
    os.environ.update(chosen)
    try:
        yield
    finally:
        for name in chosen:
            os.environ.pop(name, None)


@contextlib.contextmanager
def _stdout_to_stderr(active: bool):
    """While active, anything written to stdout (Python or native) goes to stderr instead."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
