"""The `export` command of the command line: a video's transcript, tracks or graph, or one
answer, as a file other programs read (backend/exports).

Kept apart from backend/cli/__init__.py, which parses arguments and reports failures for every command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from backend.errors import ExportError, UsageError
from backend.exports import ANSWER_FORMATS, VIDEO_FORMATS

_FORMATS_HELP = ("srt, vtt: the transcript; csv: one row per tracked box; graphml: the knowledge "
                 "graph; md, json: the answer in --answer with its key frames")


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export", parents=[common], help="write a video's transcript, tracks or "
                                                        "graph, or an answer, as a file")
    p.add_argument("video_id")
    p.add_argument("--format", required=True, choices=[*VIDEO_FORMATS, *ANSWER_FORMATS],
                   help=_FORMATS_HELP)
    p.add_argument("--answer", metavar="FILE", help="md, json: what `ask VIDEO_ID QUESTION "
                                                    "--json` printed, saved to a file")
    p.add_argument("--out", metavar="FILE", help="write here (default: stdout; md needs it, "
                                                 "its key frames go in FILE's folder)")
    p.set_defaults(run=export, render=print_export)


def export(args, settings) -> dict:
    from backend.exports import answer as answer_export
    from backend.exports import read_only, target
    from backend.exports import video as video_export
    from backend.library import Library

    _check_arguments(args)
    entry = Library(settings.home).get(args.video_id)
    out = Path(args.out) if args.out else None
    if out:
        _outside_library(out, settings.home)
        target.check(out)
    payload = {"video_id": entry.video_id, "format": args.format}
    if args.format in ANSWER_FORMATS:
        answer = answer_export.load(_read(Path(args.answer)), Path(args.answer).name)
        answer_export.check_video(answer, entry)
        if out:
            files = answer_export.write(answer, entry, out, args.format)
            return {**payload, "out": str(out), "images": [str(p) for p in files[1:]]}
        shown = answer_export.key_frames(answer, entry)
        return {**payload, "text": answer_export.render(answer, entry.name, shown, args.format)}
    with read_only(entry) as db:
        text = video_export.render(db, args.format)
        if args.format in ("srt", "vtt") and not video_export.speech_segments(db):
            print(f"note: {entry.name} has no transcribed speech: the {args.format} file has no "
                  "cues.", file=sys.stderr)
    if out:
        target.write(out, text.encode("utf-8"))
        return {**payload, "out": str(out)}
    return {**payload, "text": text}


def _outside_library(out: Path, home: Path) -> None:
    """An export never lands inside MEMORYREEL_HOME: written over a video's `video.db` it would
    leave that video unreadable, and a stray file there is nobody's."""
    library = Path(home).resolve()
    where = out.resolve()
    if where == library or library in where.parents:
        raise UsageError(f"--out {out} is inside the library folder ({home}, MEMORYREEL_HOME), "
                         f"which only ingest writes: choose a file outside it.")


def _check_arguments(args) -> None:
    if args.format in ANSWER_FORMATS and not args.answer:
        raise UsageError(f"--format {args.format} needs --answer FILE: the output of `python -m "
                         "backend ask VIDEO_ID QUESTION --json` saved to a file.")
    if args.format in VIDEO_FORMATS and args.answer:
        raise UsageError(f"--answer is for --format md or json; --format {args.format} exports "
                         "the video's own tables.")
    if args.format == "md" and not args.out:
        raise UsageError("--format md writes key-frame images beside the Markdown, so it needs "
                         "--out FILE.md.")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ExportError(f"The answer file '{path}' does not exist.") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ExportError(f"The answer file '{path}' cannot be read as text ({e}).") from None


def print_export(payload: dict) -> None:
    """The text itself when it was not written to a file, else where it went."""
    if "text" in payload:
        sys.stdout.write(payload["text"])
        return
    images = payload.get("images")
    print(f"written to {payload['out']}"
          + (f" with {len(images)} key frames in {Path(images[0]).parent}" if images else ""))
