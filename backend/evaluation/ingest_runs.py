"""Ingest and tracking benchmarks that print figures. Ratios are measured side by side in one
run, never asserted.

`bench ingest PATH`: ingests PATH and the same video repeated N times (stream-copied into one
file), or with `--join MINUTES` the shared clips joined into one video that long, into throwaway
libraries, each in a fresh process so peak RSS is that ingest's own. Each run's seconds are
grouped into the stage budget (`stage_budget`: decode, people, objects ...). With `--warm`,
PATH is also ingested after another video in one process, its models loaded, as the app's
uploads after its first are. With `--vary VARIABLE=A,B` it ingests PATH once per value of that
setting (of each, with `PLACES,ACTIVITIES=0,1`: stages off and on together) instead, side by
side in one run (alternating, `--rounds` times), to compare e.g. detector runtimes on a busy
machine. Each run also reports its CPU seconds, which other processes' load changes far less
than wall time.
`bench ingest FOLDER --workers 1,2 [--ray local]`: the whole folder ingested by a batch run
(`ingest FOLDER --workers N`) once per worker count, and through a local Ray instance, each in a
fresh process and an empty library: wall seconds, realtime factor (video seconds ingested per
wall second) and each worker's peak RSS, side by side.
`bench tracking`: ingests each MOT-layout sequence with tracking alone (no speech, text or
moving objects), once per compared setting, and scores the tracks against the ground truth.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import av

from backend import config
from backend.config import Settings


def concat_copies(source: Path, target: Path, copies: int) -> None:
    """Write `copies` back-to-back copies of the video stream of `source` (no re-encoding)."""
    with av.open(str(source)) as src, av.open(str(target), "w") as dst:
        in_stream = src.streams.video[0]
        out_stream = dst.add_stream_from_template(in_stream)
        offset = 0
        for _ in range(copies):
            src.seek(0)
            last = 0
            for packet in src.demux(in_stream):
                if packet.dts is None:
                    continue
                span = (packet.duration or 0)
                last = max(last, packet.dts + span, (packet.pts or 0) + span)
                packet.dts += offset
                if packet.pts is not None:
                    packet.pts += offset
                packet.stream = out_stream
                dst.mux(packet)
            offset += last


def join_clips(sources: list[Path], target: Path, minutes: float, size: tuple[int, int],
               fps: float) -> float:
    """Write the `sources` one after another, over and over, until `minutes` of video, into
    one H.264 file of `size` (width, height) at `fps`; returns its seconds. The clips differ
    in size, rate and codec, so they are re-encoded (picture only: the joined video tests
    length, not speech)."""
    wanted = round(minutes * 60 * fps)
    written = 0
    with av.open(str(target), "w") as dst:
        rate = Fraction(fps).limit_denominator(1001)
        stream = dst.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        stream.options = {"preset": "ultrafast", "crf": "23"}
        while written < wanted:
            for source in sources:
                for frame in _resampled(source, fps):
                    frame = frame.reformat(width=size[0], height=size[1], format="yuv420p")
                    frame.pts, frame.time_base = written, 1 / rate  # frame n at n / fps
                    dst.mux(stream.encode(frame))
                    written += 1
                    if written >= wanted:
                        break
                if written >= wanted:
                    break
        dst.mux(stream.encode(None))
    return written / fps


def _resampled(source: Path, fps: float):
    """The frames of `source`'s picture at `fps` (dropped or repeated by their time)."""
    with av.open(str(source)) as src:
        shown = 0
        for frame in src.decode(video=0):
            t = float(frame.time or 0.0)
            while shown / fps <= t:
                yield frame
                shown += 1


def _run_child(path: Path, home: Path, overrides: dict[str, str] | None = None,
               warm_up: Path | None = None) -> dict:
    """`path` ingested in a fresh process; with `warm_up`, after that video, by the same models
    (the app keeps its models between uploads), and its CPU seconds counted from then."""
    env = dict(os.environ, MEMORYREEL_HOME=str(home), **(overrides or {}))
    code = ("import json, resource, sys; from pathlib import Path; from backend import config; "
            "from backend.factory import ModelSet; from backend.ingest.pipeline import ingest; "
            "s = config.load(); m = ModelSet(s); "
            "w = sys.argv[2:] and ingest(Path(sys.argv[2]), s, models=m); "
            "u0 = resource.getrusage(resource.RUSAGE_SELF); "
            "r = ingest(Path(sys.argv[1]), s, models=m).as_dict(); "
            "u = resource.getrusage(resource.RUSAGE_SELF); "
            "r['peak_rss_mb'] = u.ru_maxrss / 1024; "
            "r['cpu_s'] = u.ru_utime + u.ru_stime - (u0.ru_utime + u0.ru_stime if w else 0); "
            "print(json.dumps(r))")
    done = subprocess.run([sys.executable, "-c", code, str(path),
                           *([str(warm_up)] if warm_up else [])], env=env, capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[2])
    if done.returncode != 0:
        raise RuntimeError(f"bench ingest of {path.name} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _figures(run: dict) -> dict:
    total = run["seconds"]["total"]
    return {"duration_s": round(run["duration"], 2), "total_s": round(total, 2),
            "realtime_factor": round(run["duration"] / total, 3),
            "peak_rss_mb": round(run["peak_rss_mb"], 1), "cpu_s": round(run["cpu_s"], 1),
            "stage_seconds": run["seconds"], "budget": stage_budget(run["seconds"]),
            "beside": {name: round(run["seconds"].get(key, 0.0), 2) for name, key in BESIDE.items()},
            "counts": run["counts"]}


# The stages a reader budgets for, each from the ingest's own stage seconds (pipeline.STAGES
# and the frame pass's `frames.*` parts); what none of them names is `other`.
BUDGET = {"decode": ("frames.decode",), "people": ("frames.track", "frames.pose"),
          "objects": ("frames.objects",), "moving": ("frames.motion",), "tags": ("frames.tags",),
          "places": ("frames.places",), "activities": ("activities",),
          "text": ("frames.ocr",), "captions": ("frames.caption",), "actions": ("actions",),
          "speech": ("speech",), "scenes": ("scenes",),
          "memory": ("describe", "graph", "embed"), "models": ("models",)}


# Work that runs on a thread beside the person tracker (`frame_pass.scan`): the budget counts
# only the frame pass's wait for it ("moving"); its own seconds are shown apart.
BESIDE = {"moving": "frames.beside.motion", "scenes": "frames.beside.scenes"}


def stage_budget(seconds: dict[str, float]) -> dict[str, float]:
    """Seconds per budgeted stage, then `other` (hashing, track cleaning, the preview, and the
    frame pass's own work: colours, thumbnails) and `total`."""
    budget = {name: round(sum(seconds.get(k, 0.0) for k in keys), 2)
              for name, keys in BUDGET.items()}
    total = seconds.get("total", 0.0)
    return {**budget, "other": round(total - sum(budget.values()), 2), "total": round(total, 2)}


def ingest_bench(path: Path, settings: Settings, repeat: int = 4,
                 vary: tuple[list[str], list[str]] | None = None, rounds: int = 1,
                 join_minutes: float = 0.0, warm: bool = False,
                 progress=lambda line: None) -> dict:
    if vary:
        return _compare_ingest(path, settings, *vary, rounds=rounds, progress=progress)
    with tempfile.TemporaryDirectory(prefix="memoryreel-bench-") as tmp:
        tmp = Path(tmp)
        label, long_video = _long_video(path, tmp, repeat, join_minutes, progress)
        single = _figures(_run_child(path, tmp / "home-1x"))
        progress(f"{path.name}: {single['total_s']} s, {single['realtime_factor']}x realtime")
        longer = _figures(_run_child(long_video, tmp / "home-long"))
        warmed = {}
        if warm:
            # Another file of the same picture (a stream copy), so it is ingested, not found.
            other = tmp / f"{path.stem}-warm-up{path.suffix}"
            concat_copies(path, other, 1)
            warmed = {"warm": _figures(_run_child(path, tmp / "home-warm", warm_up=other))}
            progress(f"{path.name} with its models loaded: {warmed['warm']['total_s']} s, "
                     f"{warmed['warm']['realtime_factor']}x realtime")
    return {
        "video": path.name, "machine": _machine(),
        "settings": {"track_fps": settings.track_fps, "detector_imgsz": settings.detector_imgsz,
                     "ocr_interval": settings.ocr_interval},
        "x1": single, label: longer, "long": label, **warmed,
        "peak_rss_ratio": round(longer["peak_rss_mb"] / single["peak_rss_mb"], 3),
    }


def _long_video(path: Path, tmp: Path, repeat: int, join_minutes: float,
                progress) -> tuple[str, Path]:
    """(label, path) of the longer video whose peak RSS is set against PATH's: the shared
    clips joined to `join_minutes`, in PATH's size and rate, or PATH `repeat` times."""
    if not join_minutes:
        target = tmp / f"{path.stem}-x{repeat}{path.suffix}"
        concat_copies(path, target, repeat)
        return f"x{repeat}", target
    from backend.ingest import decode

    meta = decode.probe(path)
    clips = sorted(p for p in path.parent.iterdir() if p.suffix.lower() in (".mp4", ".avi"))
    target = tmp / f"joined-{join_minutes:g}min.mp4"
    seconds = join_clips(clips, target, join_minutes, (meta.width, meta.height), meta.fps)
    progress(f"joined {len(clips)} clips into {seconds:.0f} s of video")
    return f"joined {join_minutes:g} min", target


def batch_bench(folder: Path, workers: list[int], ray: str = "",
                progress=lambda line: None) -> dict:
    runs = []
    with tempfile.TemporaryDirectory(prefix="memoryreel-bench-batch-") as tmp:
        engines = [(n, "") for n in workers] + ([(max(workers), ray)] if ray else [])
        for k, (n, address) in enumerate(engines):
            summary = _run_batch(folder, Path(tmp) / f"home-{k}", n, address)
            runs.append(_batch_figures(summary, n, address))
            progress(f"{runs[-1]['engine']}: {runs[-1]['wall_s']} s, "
                     f"{runs[-1]['realtime_factor']}x realtime")
    return {"folder": str(folder), "machine": _machine(), "workers": workers, "runs": runs}


def _run_batch(folder: Path, home: Path, workers: int, ray: str) -> dict:
    command = [sys.executable, "-m", "backend", "ingest", str(folder), "--workers", str(workers),
               "--json", *(["--ray", ray] if ray else [])]
    done = subprocess.run(command, env=dict(os.environ, MEMORYREEL_HOME=str(home)),
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    summary = json.loads(done.stdout)
    if done.returncode != 0 or summary["failed"]:
        why = summary["failed"] if done.returncode == 0 else summary["error"]
        raise RuntimeError(f"bench: `{' '.join(command)}` failed: {why}\n{done.stderr[-2000:]}")
    return summary


def _batch_figures(summary: dict, workers: int, ray: str) -> dict:
    video_s = sum(f["duration"] for f in summary["ingested"])
    peaks: dict[str, float] = {}
    for f in summary["ingested"]:
        peaks[f["worker"]] = max(peaks.get(f["worker"], 0.0), f["peak_rss_mb"])
    return {"engine": f"Ray {ray}" if ray else f"{workers} worker{'s' if workers > 1 else ''}",
            "workers": workers, "videos": len(summary["ingested"]), "video_s": round(video_s, 1),
            "wall_s": summary["seconds"], "realtime_factor": round(video_s / summary["seconds"], 3),
            "peak_rss_mb": sorted(round(v) for v in peaks.values()), "detail": summary["engine"]}


# Tracking alone: the other stages neither change the tracks nor cost what is measured.
_TRACKING_ONLY = {"MEMORYREEL_ASR": "0", "MEMORYREEL_OCR": "0", "MEMORYREEL_MOTION": "0"}


def tracking_bench(sequences: list, variants: list[dict[str, str]], settings: Settings) -> dict:
    """Each sequence ingested once per variant (environment overrides, {} for the settings as
    they are), in a fresh process and library, and scored against its ground truth."""
    from backend.evaluation import tracking

    runs = []
    with tempfile.TemporaryDirectory(prefix="memoryreel-bench-tracking-") as tmp:
        for v, overrides in enumerate(variants):
            for sequence in sequences:
                home = Path(tmp) / f"{v}-{sequence.name}"
                run = _run_child(sequence.video, home, {**_TRACKING_ONLY, **overrides})
                track_fps = float(overrides.get("MEMORYREEL_TRACK_FPS", settings.track_fps))
                frames, rows, size = _tracked_frames(
                    home / "videos" / run["video_id"] / "video.db", track_fps, sequence.fps)
                figures = tracking.score(tracking.read_ground_truth(sequence),
                                         tracking.tracked_people(rows), frames, size,
                                         tracking.true_identities(sequence))
                track_seconds = run["seconds"].get("frames.track", run["seconds"]["frames"])
                figures["track_s_per_video_s"] = round(track_seconds / run["duration"], 3)
                runs.append({"sequence": sequence.name, "variant": _variant_label(overrides),
                             **figures})
    return {"sequences": [s.name for s in sequences],
            "variants": [_variant_label(o) for o in variants], "runs": runs}


def _variant_label(overrides: dict[str, str]) -> str:
    return config.overrides_label(overrides) or "as set"


def _tracked_frames(db_path: Path, track_fps: float,
                    gt_fps: float) -> tuple[list[tuple[int, int]], list[dict], tuple[int, int]]:
    """The frames the tracker saw, as (ground-truth frame index, video frame index) pairs matched
    by time, the person detections written for them, and the frame's (width, height)."""
    import sqlite_utils

    from backend.ingest import decode

    db = sqlite_utils.Database(db_path)
    try:
        video = next(db["video"].rows)
        meta = decode.VideoMeta.from_row(video)
        rows = list(db.query("SELECT d.frame, d.instance_id, d.x1, d.y1, d.x2, d.y2 FROM detections d "
                             "JOIN instances i ON i.id = d.instance_id WHERE i.category = 'person'"))
    finally:
        db.close()
    indices = decode.sample_indices(meta, track_fps)
    return [(round(i / meta.fps * gt_fps), i) for i in indices], rows, (meta.width, meta.height)


def _compare_ingest(path: Path, settings: Settings, variables: list[str], values: list[str],
                    rounds: int, progress) -> dict:
    """PATH ingested once per value of the settings (all of them take it), alternating,
    `rounds` times; each run in a fresh process with an empty library (model files come from
    MEMORYREEL_CACHE as usual)."""
    runs: dict[str, list[dict]] = {value: [] for value in values}
    setting = ",".join(variables)
    with tempfile.TemporaryDirectory(prefix="memoryreel-bench-") as tmp:
        for r in range(rounds):
            for k, value in enumerate(values):
                home = Path(tmp) / f"home-{r}-{k}"
                figures = _figures(_run_child(path, home, dict.fromkeys(variables, value)))
                runs[value].append(figures)
                progress(f"{setting}={value} round {r + 1}: {figures['total_s']} s, "
                         f"{figures['realtime_factor']}x realtime, {figures['cpu_s']} CPU s")
    return {"video": path.name, "machine": _machine(), "setting": setting, "rounds": rounds,
            "runs": {value: {"median_total_s": _median([f["total_s"] for f in figures]),
                             "median_cpu_s": _median([f["cpu_s"] for f in figures]),
                             "each": figures}
                     for value, figures in runs.items()}}


def _machine() -> dict:
    return {"cpus": os.cpu_count(), "python": sys.version.split()[0],
            "load_average": [round(v, 1) for v in os.getloadavg()]}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return round(ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2, 2)
