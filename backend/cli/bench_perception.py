"""The `bench` commands for what ingest perceives beyond tracking: the frame taggers, what people
do and the picture's facts, and colours, places and directions.

Kept apart from backend/cli/bench.py, which holds the benches of tracking, detectors, ingest,
the agent and memory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from backend.cli.bench import SHARED
from backend.errors import InputError, UsageError


def bench_appearance(args, settings) -> dict:
    from backend.evaluation import appearance_bench, scenes
    from backend.factory import ModelSet

    root = Path(args.truth) if args.truth else SHARED / "images" / "objects-truth"
    if not (root / "coco_val2017_first128" / "captions.json").is_file():
        raise InputError(f"No captions truth under {root} (coco_val2017_first128/captions.json).")
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    models = ModelSet(settings)
    payload = {"colours": appearance_bench.colour_bench(root, models, limit=args.limit,
                                                         progress=say)}
    if args.colour_set:
        manifest = Path(args.colour_set)
        if not manifest.is_file():
            raise InputError(f"No colour-labelled manifest at {manifest}.")
        payload["labelled"] = appearance_bench.labelled_bench(manifest, models, progress=say)
    if not args.no_places:
        payload["places"] = appearance_bench.places_bench(
            scenes.every_scene(SHARED / "videos"), models, settings, progress=say)
    return payload


def print_appearance_bench(payload: dict) -> None:
    from backend.evaluation import appearance_bench

    colours = payload["colours"]
    print(f"{colours['source']}: colour words of the captions where the thing was found")
    _print_colour_figures(colours)
    if "labelled" in payload:
        labelled = payload["labelled"]
        print(f"\n{labelled['source']}: the colours a labelled set names")
        _print_colour_figures(labelled)
        print("\n  dataset (white patch) | items | stated | right | precision | coverage")
        for dataset, c in labelled["by_dataset"].items():
            print(f"    {dataset} | {_row(c)}")
        print(f"\n  five options a labelled colour ({appearance_bench.CHOICE_DRAWS} draws of four "
              "it is not), white patch | questions | right | wrong | left open | expected right")
        for half, ways in labelled["choices"].items():
            for way, c in ways.items():
                print(f"    {half}, {way} | {c['questions']} | {c['right']} | {c['wrong']} | "
                      f"{c['open']} | {_share(c['expected'])}")
    if "places" in payload:
        print("\nscene | half | track-times | place agrees | distance agrees | direction agrees "
              "(judged) | relations agree (pairs) | tracks said still: right | said moving: right "
              "| intervals read walking: right | standing: right | moving people read walking")
        for run in payload["places"]["scenes"]:
            print(f"  {run['sequence']} | {run['half']} | {run['matched']} | "
                  f"{_share(run['place_agrees'])} | {_share(run['distance_agrees'])} | "
                  f"{_share(run['direction_agrees'])} ({run['directions_judged']}) | "
                  f"{_share(run['relation_agrees'])} ({run['pairs']}) | {_states(run)} | "
                  f"{_doings(run)}")
        for half, f in payload["places"]["halves"].items():
            print(f"  {half} half: place {_share(f['place_agrees'])} of {f['matched']}, "
                  f"distance {_share(f['distance_agrees'])}, "
                  f"direction {_share(f['direction_agrees'])} of {f['directions_judged']}, "
                  f"relations {_share(f['relation_agrees'])} of {f['pairs']} pairs, "
                  f"tracks {_states(f)}, {_doings(f)}")


def _states(f: dict) -> str:
    """'still 18 of 18 (100%), moving 41 of 42 (98%)': tracks said to keep still or to move,
    and how many of them truly did."""
    return ", ".join(f"{state} {f[state + '_right']} of {f[state + '_said']} "
                     f"({_share(f[state + '_precision'])})" for state in ("still", "moving"))


def _doings(f: dict) -> str:
    """'walking 40 of 42, standing 12 of 13, movers read walking 20 of 24'."""
    return (f"walking {f['walking_right']} of {f['walking_said']}, standing "
            f"{f['standing_right']} of {f['standing_said']}, movers read walking "
            f"{f['movers_walking']} of {f['movers']}")


def _print_colour_figures(colours: dict) -> None:
    for half, lights in colours["figures"].items():
        for light, f in lights.items():
            print(f"\n{half} half, {light}: {_stated(f)}")
            print("  named | stated | right | precision")
            for colour, c in f["by_colour"].items():
                print(f"    {colour} | {c['stated']} | {c['right']} | {_share(c['precision'])}")
            print("  said | items | stated | right | precision | coverage")
            for colour, c in f["by_said"].items():
                print(f"    {colour} | {_row(c)}")
            print("  part | items | stated | right | precision | coverage")
            for part, c in f["by_part"].items():
                print(f"    {part} | {_row(c)}")


def _stated(f: dict) -> str:
    return (f"{f['right']} right of {f['stated']} stated ({_share(f['precision'])} precision), "
            f"{f['stated']} stated of {f['items']} ({_share(f['coverage'])} coverage)")


def _row(c: dict) -> str:
    return (f"{c['items']} | {c['stated']} | {c['right']} | {_share(c['precision'])} | "
            f"{_share(c['coverage'])}")


def bench_actions(args, settings) -> dict:
    from backend.agent import precision
    from backend.evaluation.actions_bench import actions_bench, picks_table, precision_table
    from backend.factory import ModelSet

    if args.write and args.limit:
        raise UsageError("--write records every image: give no --limit.")
    root = Path(args.truth) if args.truth else SHARED / "images" / "objects-truth"
    if not (root / "coco_val2017_first128" / "captions.json").is_file():
        raise InputError(f"No captions truth under {root} (coco_val2017_first128/captions.json).")
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    if args.clips:
        payload = _action_clips(args, settings, say)
        part = {"picks": picks_table(payload["clips_bench"])}
    else:
        payload = actions_bench(root, ModelSet(settings), limit=args.limit, progress=say)
        part = precision_table(payload)
    if args.write:
        # Each truth writes its own part of the contract and keeps the other's.
        table = {**precision.action_measured(), **part}
        precision.ACTION_TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        payload["written"] = [str(precision.ACTION_TABLE)]
    return payload


def _action_clips(args, settings, say) -> dict:
    """Sets of labelled action clips (a manifest CSV beside each set), ingested into a library of
    their own under MEMORYREEL_CACHE so that a second run reads them back; with --questions (one
    set), their five-option questions written for `eval` too."""
    import csv
    from dataclasses import replace

    from backend.evaluation.actions_bench import clips_bench, merged, question_rows, read_manifest

    manifests = [Path(m) for m in args.clips]
    if missing := [str(m) for m in manifests if not m.is_file()]:
        raise InputError(f"No clips manifest at {', '.join(missing)}.")
    if args.questions and len(manifests) > 1:
        raise UsageError("--questions writes one set's questions: give one manifest with it.")
    try:
        sets = [read_manifest(m) for m in manifests]
    except ValueError as e:
        raise InputError(str(e)) from None
    if args.questions:
        questions = question_rows(sets[0])
        with open(args.questions, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(questions[0]))
            writer.writeheader()
            writer.writerows(questions)
    at = replace(settings, home=settings.cache_dir / "action-clips-library")
    runs = [clips_bench(rows, at, progress=say) for rows in sets]
    return {"manifests": [str(m) for m in manifests], "clips_bench": merged(runs)}


def print_actions_bench(payload: dict) -> None:
    if "clips_bench" in payload:
        _print_clips_bench(payload["clips_bench"])
        return
    print(f"{payload['source']}: {payload['images']} images; tagger {payload['tagger']}; "
          f"places {payload.get('places', 'off')}")
    for half, figures in payload["halves"].items():
        print(f"\n{half} half: action | stated | right | captions say | precision | recall")
        for action, c in sorted(figures["actions"].items()):
            if c["predicted"] or c["true"]:
                print(f"  {action} | {c['predicted']} | {c['tp']} | {c['true']} | "
                      f"{_share(c['precision'])} | {_share(c['recall'])}")
        for table, what in (("tags", "top tag"), ("scenes", "top place tag")):
            top = figures.get(table, {"top1_right": 0, "top1_of": 0})
            print(f"  {what} named in a caption: {top['top1_right']} of {top['top1_of']}")
        for fact, c in figures["places"].items():
            print(f"  {fact}: said {c['of']}, right {c['right']}, captions say {c['true']} "
                  f"(precision {_share(c['precision'])}, recall {_share(c['recall'])})")
    for path in payload.get("written", []):
        print(f"wrote {path}")


def _print_clips_bench(payload: dict) -> None:
    for half, figures in payload["halves"].items():
        q = figures["question"]
        print(f"\n{half} half, {q['clips']} clips: 'what activity is shown' (5 options) decided by "
              f"code right {q['right']}, wrong {q['wrong']}, undecided {q['undecided']}; "
              f"best-scored option right {q['best_right']}")
        print(f"  picks the confidence contract calls high: right {q['high_right']} of {q['high']}")
        print("  a pick rests on (clips the classifier was not trained on) | right | of")
        for kind, c in sorted(figures["rests_on"].items()):
            print(f"  {kind} | {c['right']} | {c['of']}")
        print("  the classifier found likely (clips it was not trained on) | clips | alone "
              "picks the label | picks another")
        for activity, c in sorted(figures["activities"].items(), key=lambda kv: -kv[1]["stated"]):
            print(f"  {activity} | {c['stated']} | {c['right']} | {c['wrong']}")
        print("  action | stated | right | labels say | precision | recall")
        for action, c in sorted(figures["actions"].items()):
            print(f"  {action} | {c['predicted']} | {c['tp']} | {c['true']} | "
                  f"{_share(c['precision'])} | {_share(c['recall'])}")
    failed = [c for c in payload["clips"] if "error" in c]
    if failed:
        print(f"\nnot ingested: {', '.join(c['file'] for c in failed)}")


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def bench_tags(args, settings) -> dict:
    from backend.evaluation.tags_bench import read_captions, tags_bench
    from models.tagger import VARIANTS, ImageTagger

    wanted = [c.strip() for c in args.candidates.split(",")] if args.candidates else list(VARIANTS)
    if unknown := [c for c in wanted if c not in VARIANTS]:
        raise InputError(f"Unknown tagger {', '.join(unknown)}: choose from {', '.join(VARIANTS)}.")
    say = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr))
    root = Path(args.truth) if args.truth else SHARED / "images" / "objects-truth"
    # One thread, as ingest runs it beside the detectors.
    candidates = {c: (lambda c=c: ImageTagger(settings.cache_dir, c, threads=1)) for c in wanted}
    return tags_bench(read_captions(root, args.limit), candidates, progress=say)


def print_tags_bench(payload: dict) -> None:
    from backend.evaluation.tags_bench import table

    print("a tag agrees when its synset is a sense of a caption word, or a kind of one\n")
    print(table(payload))


# The sample clips whose objects are cars, bottles and the like.
