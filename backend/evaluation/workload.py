"""A long question workload over a folder of videos, for measuring what memory saves.

Memory can only pay over many questions of recurring kinds, so the workload asks a few generic
information needs again and again, each time in other words (templates, at least four per need)
and, where the need takes a time, often at another time. Nothing is keyed to a clip: any folder
of videos gives a workload.

Where a video has MOTChallenge ground truth (a `gt.txt` found by `tracking.find_sequences`),
its questions are about people and their answers come from the ground truth (`truth` =
`external`). Counts are taken at the very frame the question names: only times that are a
whole frame of the ground truth and are written with one decimal are asked. Other videos are
ingested and asked about what their tables hold (`truth` = `tables`): the word said at a time,
the text on screen at a time, how many people or moving objects are in view at a time. These
check the answer path against our own tables, not the tables against the world.

The file has the columns of dev-qa.csv (`answer` is the index of the right one of five options)
plus `truth` and `need` (the information need, so paraphrases of one need can be grouped).
The same seed gives the same file, byte for byte.
"""

from __future__ import annotations

import csv
import logging
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from backend.ingest import describe
from backend.config import Settings
from backend.errors import InputError
from backend.evaluation import tracking
from backend.evaluation.scenes import halves as halves_of
from backend.library import VIDEO_EXTENSIONS

log = logging.getLogger(__name__)

COLUMNS = ["video", "qid", "type", "question", "answer", "a0", "a1", "a2", "a3", "a4", "truth",
           "need"]
N_OPTIONS = 5

# need -> (NExT-QA type code, wordings). {when} is a time phrase; {things}/{thing} what is counted.
NEEDS: dict[str, tuple[str, list[str]]] = {
    "count_at": ("TC", [
        "how many {things} are in view {when}",
        "{when}, how many {things} can be seen",
        "what is the number of {things} visible {when}",
        "count the {things} on screen {when}",
        "how many {things} does the camera show {when}",
    ]),
    "most_at_once": ("DC", [
        "what is the largest number of {things} in view at the same time",
        "at most, how many {things} are visible at once",
        "how many {things} can be seen simultaneously at the busiest moment",
        "what is the highest count of {things} on screen at one moment",
        "how many {things} are in view together at the peak",
    ]),
    "count_distinct": ("DC", [
        "how many different {things} appear in the video",
        "how many distinct {things} are seen over the whole clip",
        "in total, how many individual {things} show up",
        "how many separate {things} come into view during the video",
        "count every different {thing} that appears in the clip",
    ]),
    "first_appearance": ("TN", [
        "when does the first {thing} appear",
        "at what time does a {thing} first come into view",
        "when is a {thing} seen for the first time",
        "how many seconds in does the first {thing} show up",
    ]),
    "first_exit": ("TN", [
        "when does the first {thing} leave the view",
        "at what time does a {thing} first walk out of the picture",
        "when does the first of the {things} disappear from view",
        "how many seconds in does the first {thing} exit the frame",
        "at what moment does the first {thing} go out of sight",
    ]),
    "last_arrival": ("TN", [
        "when does the last new {thing} come into view",
        "at what time does the final {thing} enter the picture",
        "when does the last {thing} to arrive first appear",
        "how many seconds into the clip does the latest {thing} to arrive show up",
        "at what moment does the last {thing} show up for the first time",
    ]),
    "direction": ("DO", [
        "which way do most of the {things} walk",
        "in which direction do most {things} move across the picture",
        "what is the main direction the {things} walk in",
        "most {things} cross the view in which direction",
        "where are most of the {things} heading",
    ]),
    "said_at": ("TC", [
        "what word is said {when}",
        "which word does the speaker say {when}",
        "what is the word spoken {when}",
        "what word can be heard {when}",
        "{when}, what word is said",
    ]),
    "text_at": ("TC", [
        "what text is shown on the screen {when}",
        "which text can be read on screen {when}",
        "what does the on-screen text say {when}",
        "what words are displayed {when}",
        "{when}, what text appears on the screen",
    ]),
}

_AT_SECONDS = ["at {n} {unit}", "{n} {unit} into the video", "at the {n} second mark",
               "when the clip is at {n} s"]
_AT_START = ["at the start", "in the first frame", "at the very beginning"]
_AT_END = ["at the end", "in the last frame", "at the very end"]


def _direction_of(start: tuple[float, float, float], end: tuple[float, float, float]) -> str:
    """The direction words `describe.motion` gives a track going from `start` to `end`, each
    (cx, cy, h)."""
    track = [describe.TrackPoint(0.0, *start), describe.TrackPoint(1.0, *end)]
    return " and ".join(describe.directions(describe.motion(track)))


# The agent's own words for directions (asked of `describe.motion` itself, so a computed one
# matches): right, left, towards, away, still.
DIRECTIONS = [_direction_of(start, end) for start, end in (
    ((0.25, 0.5, 0.3), (0.75, 0.5, 0.3)), ((0.75, 0.5, 0.3), (0.25, 0.5, 0.3)),
    ((0.5, 0.5, 0.3), (0.5, 0.5, 0.6)), ((0.5, 0.5, 0.3), (0.5, 0.5, 0.15)),
    ((0.5, 0.5, 0.3), (0.5, 0.5, 0.3)))]
_RIGHTWARDS, _LEFTWARDS = DIRECTIONS[:2]
_PEOPLE = {"things": "people", "thing": "person"}
_MOVING = {"things": "moving objects", "thing": "moving object"}
_WORD = re.compile(r"[^\w'-]")
_TIME_GAP = 0.4  # seconds at least between two time options, so the nearest is the right one


@dataclass(frozen=True)
class Fact:
    """One answerable instance of a need, before it is worded."""

    need: str
    truth: str                     # external | tables
    right: str
    distractors: tuple[str, ...]   # at least N_OPTIONS - 1, none equal to `right`
    when: float | str | None = None  # seconds, "start", "end", or no time
    nouns: tuple[tuple[str, str], ...] = tuple(_PEOPLE.items())


Sampler = Callable[[random.Random], "Fact | None"]


# --- options -----------------------------------------------------------------------------------

def count_distractors(n: int, rng: random.Random) -> tuple[str, ...]:
    """Four of the six nearest other counts (never below zero)."""
    near = sorted((c for c in range(max(0, n - 6), n + 7) if c != n), key=lambda c: (abs(c - n), c))
    return tuple(str(c) for c in rng.sample(near[:6], N_OPTIONS - 1))


def spaced_distractors(n: int, rng: random.Random) -> tuple[str, ...]:
    """Five counts in a row, one or two apart, as a test sets them (e.g. 3 4 5 6 7, 2 4 6 8 10),
    the right one at a random place among them (never below zero): a count off by one is wrong."""
    step = rng.choice((1, 2))
    below = rng.randrange(min(N_OPTIONS, n // step + 1))  # options under n, none below zero
    start = n - step * below
    return tuple(str(c) for c in range(start, start + step * N_OPTIONS, step) if c != n)


def time_distractors(right: float, duration: float, rng: random.Random) -> tuple[str, ...] | None:
    """Four other times in the video, each at least a gap from the right one and from each other."""
    gap = max(_TIME_GAP, duration / 15)
    grid = [round(i / 10, 1) for i in range(int(duration * 10) + 1)]
    rng.shuffle(grid)
    chosen: list[float] = []
    for t in grid:
        if all(abs(t - other) >= gap for other in [right, *chosen]):
            chosen.append(t)
            if len(chosen) == N_OPTIONS - 1:
                return tuple(seconds(t) for t in chosen)
    return None


def seconds(t: float) -> str:
    return f"{t:.1f} s"


def options_for(fact: Fact, rng: random.Random) -> tuple[list[str], int]:
    """The right option and four distractors, distinct (case-blind), shuffled."""
    seen = {fact.right.lower()}
    wrong = []
    for d in fact.distractors:
        if d.lower() not in seen:
            seen.add(d.lower())
            wrong.append(d)
    if len(wrong) < N_OPTIONS - 1:
        raise ValueError(f"{fact.need}: too few distinct distractors for {fact.right!r}")
    options = [fact.right, *wrong[:N_OPTIONS - 1]]
    rng.shuffle(options)
    return options, options.index(fact.right)


def time_phrase(when: float | str, rng: random.Random) -> str:
    if when == "start":
        return rng.choice(_AT_START)
    if when == "end":
        return rng.choice(_AT_END)
    return rng.choice(_AT_SECONDS).format(n=f"{when:g}", unit="second" if when == 1 else "seconds")


def word(fact: Fact, rng: random.Random, needs: dict = NEEDS) -> str:
    template = rng.choice(needs[fact.need][1])
    when = time_phrase(fact.when, rng) if fact.when is not None else ""
    return template.format(when=when, **dict(fact.nouns))


# --- from ground truth -------------------------------------------------------------------------

def ground_truth_samplers(sequence: tracking.Sequence,
                          distractors=count_distractors) -> dict[str, Sampler]:
    """Needs about people answered from a MOT ground truth (the rows the tracking bench scores);
    `distractors(n, rng)` gives a count's wrong options."""
    from backend.ingest.decode import probe

    truth = tracking.read_ground_truth(sequence)
    meta = probe(sequence.video)
    # The video's last frame, in the ground truth's numbering (from 0).
    last = round((meta.frames - 1) / meta.fps * sequence.fps)
    duration = last / sequence.fps
    lives: dict[int, list[tuple[int, tracking.Box]]] = defaultdict(list)
    for frame in sorted(truth):
        for identity, box in truth[frame]:
            lives[identity].append((frame, box))
    if not lives:
        return {}
    # Times a question can name exactly: a whole frame, written with one decimal.
    exact = [f for f in range(last + 1) if abs(round(f / sequence.fps, 1) * sequence.fps - f) < 1e-6]

    def in_view(frame: int) -> int:
        return len(truth.get(frame, []))

    def count_at(rng: random.Random) -> Fact:
        frame = rng.choice([0, last, *exact])
        when = "start" if frame == 0 else "end" if frame == last else round(frame / sequence.fps, 1)
        n = in_view(frame)
        return Fact("count_at", "external", str(n), distractors(n, rng), when)

    def constant(need: str, value: int) -> Sampler:
        return lambda rng: Fact(need, "external", str(value), distractors(value, rng))

    samplers: dict[str, Sampler] = {
        "count_at": count_at,
        "most_at_once": constant("most_at_once", max(in_view(f) for f in range(last + 1))),
    }
    identities = tracking.true_identities(sequence)
    if identities is None:
        return samplers  # head points without identities (Mall): counts only
    # Different people include those hidden behind others the whole time they are in the scene.
    samplers["count_distinct"] = constant("count_distinct", len(identities))

    def at_time(need: str, frame: int) -> Sampler:
        t = frame / sequence.fps

        def sample(rng: random.Random) -> Fact | None:
            wrong = time_distractors(round(t, 1), duration, rng)
            return Fact(need, "external", seconds(t), wrong) if wrong else None
        return sample

    firsts = [life[0][0] for life in lives.values()]
    exits = [life[-1][0] for life in lives.values() if life[-1][0] < last]
    if min(firsts) > 0:
        samplers["first_appearance"] = at_time("first_appearance", min(firsts))
    if exits:
        samplers["first_exit"] = at_time("first_exit", min(exits))
    if max(firsts) > 0:
        samplers["last_arrival"] = at_time("last_arrival", max(firsts))
    if leading := dominant_direction(lives):
        others = [d for d in DIRECTIONS if d != leading]
        samplers["direction"] = lambda rng: Fact("direction", "external", leading, tuple(others))
    return samplers


def dominant_direction(lives: dict[int, list[tuple[int, tracking.Box]]]) -> str | None:
    """The sideways direction (in `describe`'s words) when at least two thirds of the identities
    cross the picture that way (box centre moving by more than the box's mean width); else None,
    as no answer is clear."""
    ways = Counter()
    for life in lives.values():
        (_, a), (_, b) = life[0], life[-1]
        shift = (b[0] + b[2] - a[0] - a[2]) / 2
        width = sum(box[2] - box[0] for _, box in life) / len(life)
        ways[_RIGHTWARDS if shift > width else _LEFTWARDS if shift < -width
             else ""] += 1
    way, n = max(((w, n) for w, n in ways.items() if w), key=lambda x: x[1], default=("", 0))
    return way if n >= 2 and n * 3 >= 2 * len(lives) else None


# --- from the tables ---------------------------------------------------------------------------

def table_samplers(tables) -> dict[str, Sampler]:
    """Needs answered from an ingested video's tables (`queries.VideoTables`), as the agent's
    typed queries read them."""
    samplers: dict[str, Sampler] = {}
    for need, sampler in (("said_at", said_at_sampler(tables)), ("text_at", _text_at(tables))):
        if sampler:
            samplers[need] = sampler
    counts = [(nouns, sampler) for nouns, category in ((_PEOPLE, "person"), (_MOVING, "moving object"))
              if (sampler := _count_at(tables, category, nouns))]
    if counts:
        samplers["count_at"] = lambda rng: rng.choice(counts)[1](rng)
    return samplers


def said_at_sampler(tables) -> Sampler | None:
    if tables.no_speech():
        return None
    rows = tables.rows("SELECT t_start, t_end, word FROM speech_words ORDER BY t_start")
    words = [(r["t_start"], r["t_end"], _WORD.sub("", r["word"])) for r in rows]
    # Times inside exactly one word (one decimal, as asked), for words worth asking about.
    askable = []
    for start, end, w in words:
        t = round((start + end) / 2, 1)
        inside = [x for x in words if x[0] <= t <= x[1]]
        if len(w) >= 3 and w.isalpha() and len(inside) == 1:
            askable.append((t, w))

    def sample(rng: random.Random) -> Fact | None:
        t, said = rng.choice(askable)
        # Words said well away from t: plausible, and not what is heard around it.
        elsewhere = sorted({w.lower() for start, end, w in words
                            if len(w) >= 3 and w.isalpha() and w.lower() != said.lower()
                            and (end < t - 2 or start > t + 2)})
        near = {w.lower() for start, end, w in words if t - 2 <= end and start <= t + 2}
        pool = [w for w in elsewhere if w not in near]
        if len(pool) < N_OPTIONS - 1:
            return None
        return Fact("said_at", "tables", said.lower(), tuple(rng.sample(pool, N_OPTIONS - 1)),
                    t, ())
    return sample if askable else None


def _text_at(tables) -> Sampler | None:
    if tables.no_ocr():
        return None
    rows = tables.rows("SELECT t, text FROM ocr ORDER BY t")
    times = sorted({r["t"] for r in rows})
    # A text is taken to be on screen from its first read to its last; a distractor is never
    # read within a second of that span around the asked time.
    spans: dict[str, list[float]] = {}
    for r in rows:
        text = " ".join(r["text"].split())
        if text:
            spans.setdefault(text, [r["t"], r["t"]])[1] = r["t"]
    # The agent reads the latest OCR time at most 0.5 s after the asked one: ask only at times
    # where that is the read asked about.
    askable = []
    for i, t0 in enumerate(times):
        t = round(t0, 1)
        if i + 1 == len(times) or times[i + 1] > t + 0.5:
            askable.append((t, t0))

    def sample(rng: random.Random) -> Fact | None:
        t, t0 = rng.choice(askable)
        shown = sorted({" ".join(r["text"].split()) for r in rows if r["t"] == t0} - {""})
        if not shown:
            return None
        right = rng.choice(shown)
        pool = sorted(text for text, (a, b) in spans.items()
                      if text.lower() not in {s.lower() for s in shown} and not a - 1 <= t <= b + 1)
        if len(pool) < N_OPTIONS - 1:
            return None
        return Fact("text_at", "tables", right, tuple(rng.sample(pool, N_OPTIONS - 1)), t, ())
    return sample if askable else None


def _count_at(tables, category: str, nouns: dict) -> Sampler | None:
    if not tables.rows(f"SELECT 1 FROM instances WHERE category = '{category}' LIMIT 1"):
        return None
    frames = tables.rows("SELECT frame, MIN(t) AS t FROM detections GROUP BY frame ORDER BY frame")
    sampled = [r["t"] for r in frames]
    # The agent counts at the sampled frame nearest the asked time: ask where that is unambiguous.
    askable = []
    for r in frames:
        t = round(r["t"], 1)
        others = [abs(s - t) for s in sampled if s != r["t"]]
        if not others or min(others) > abs(r["t"] - t) + 1e-9:
            askable.append((t, r["frame"]))
    if not askable:
        return None

    def sample(rng: random.Random) -> Fact:
        t, frame = rng.choice(askable)
        n = tables.rows(f"SELECT COUNT(DISTINCT d.instance_id) AS n FROM detections d JOIN "
                        f"instances i ON i.id = d.instance_id WHERE d.frame = {frame} AND "
                        f"i.category = '{category}'")[0]["n"]
        return Fact("count_at", "tables", str(n), count_distractors(n, rng), t,
                    tuple(nouns.items()))
    return sample


# --- the workload ------------------------------------------------------------------------------

def video_files(folder: Path) -> list[Path]:
    return sorted(p for p in Path(folder).iterdir()
                  if p.is_file() and p.suffix.lower() in VIDEO_EXTENSIONS)


def samplers_for(videos: Path, settings: Settings, progress: Callable[[str], None] = lambda s: None
                 ) -> tuple[dict[str, dict[str, Sampler]], list[dict]]:
    """{video file name: {need: sampler}} for every video in the folder with something to ask,
    and the skipped ones with why."""
    from backend.agent.video_tables import VideoTables
    from backend.ingest.pipeline import ingest
    from backend.library import Library

    sequences = {s.video.resolve(): s for s in tracking.find_sequences(videos)}
    found, skipped = {}, []
    for path in video_files(videos):
        progress(path.name)
        try:
            if path.resolve() in sequences:
                needs = ground_truth_samplers(sequences[path.resolve()])
            else:
                entry = Library(settings.home).get(ingest(path, settings).video_id)
                needs = table_samplers(VideoTables(entry.db_path, timeout_s=settings.sql_timeout_s,
                                                   max_rows=1_000_000))
        except InputError as e:
            needs, reason = {}, str(e)
        else:
            reason = "neither ground truth nor anything askable in its tables"
        if needs:
            found[path.name] = needs
        else:
            log.warning("workload: skipping %s: %s", path.name, reason)
            skipped.append({"video": path.name, "reason": reason})
    return found, skipped


_TRIES = 20  # draws per slot before a question may repeat word for word, or the need is dropped


def generate(samplers: dict[str, dict[str, Sampler]], count: int, seed: int,
             needs: dict = NEEDS) -> list[dict]:
    """`count` questions, videos taken in turn (in a seeded order), each video's needs in turn,
    worded by `needs` (need -> type code and wordings)."""
    rng = random.Random(seed)
    order = sorted(samplers)
    rng.shuffle(order)
    turns = {v: sorted(samplers[v]) for v in order}
    for todo in turns.values():
        rng.shuffle(todo)
    asked: dict[str, set[str]] = defaultdict(set)
    rows: list[dict] = []
    qids: Counter = Counter()
    position: Counter = Counter()
    while len(rows) < count and any(turns.values()):
        for video in order:
            if len(rows) >= count or not turns[video]:
                continue
            todo = turns[video]
            need = todo[position[video] % len(todo)]
            position[video] += 1
            row = _draw(samplers[video][need], rng, asked[video], needs)
            if row is None:
                log.warning("workload: dropping %s for %s: no question could be made", need, video)
                todo.remove(need)
                continue
            qids[video] += 1
            rows.append({"video": video, "qid": qids[video], **row})
    return rows


def _draw(sampler: Sampler, rng: random.Random, asked: set[str], needs: dict) -> dict | None:
    made = None
    for _ in range(_TRIES):
        fact = sampler(rng)
        if fact is None:
            continue
        question = word(fact, rng, needs)
        made = (fact, question)
        if question not in asked:
            break
    if made is None:
        return None
    fact, question = made
    asked.add(question)
    options, answer = options_for(fact, rng)
    return {"type": needs[fact.need][0], "question": question, "answer": answer,
            **{f"a{i}": o for i, o in enumerate(options)}, "truth": fact.truth, "need": fact.need}


def write_csv(rows: list[dict], out: Path) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    columns = COLUMNS + [c for c in ("half", "scene") if rows and c in rows[0]]
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def make_workload(videos: Path, out: Path, settings: Settings, count: int = 120, seed: int = 0,
                  progress: Callable[[str], None] = lambda s: None) -> dict:
    """Write the workload CSV; returns what it holds (per video, need and kind of truth)."""
    samplers, skipped = samplers_for(Path(videos), settings, progress)
    if not samplers:
        raise InputError(f"No video in {videos} gives a question (skipped: "
                         f"{', '.join(s['video'] for s in skipped) or 'no video files'}).")
    rows = generate(samplers, count, seed)
    write_csv(rows, out)
    return {"out": str(out), "questions": len(rows), "seed": seed,
            "videos": dict(Counter(r["video"] for r in rows)),
            "needs": dict(Counter(r["need"] for r in rows)),
            "truth": dict(Counter(r["truth"] for r in rows)), "skipped": skipped}


# --- external truth only: the MOT sequences and their footage variants ---------------------------

def make_external_workload(sequences: list[tracking.Sequence], out: Path, settings: Settings,
                           count: int = 240, seed: int = 0, variants: tuple | None = None) -> dict:
    """A workload whose every answer comes from MOT ground truth: each sequence (a scene) and its
    footage variants (made once into MEMORYREEL_CACHE), counts with options one or two apart.
    The videos are linked into `videos/` beside `out` (give that folder to `eval --videos`); a
    `half` column says which half a question is in: its scene's (`scenes.halves`, named in the
    `scene` column). `variants`: the footage variants to make (default all)."""
    from backend.evaluation import footage

    if not sequences:
        raise InputError("No MOT-layout sequence to ask about.")
    scene_half = halves_of(sequences)
    folder = Path(out).parent / "videos"
    folder.mkdir(parents=True, exist_ok=True)
    samplers, scene_of = {}, {}
    root = settings.cache_dir / "footage-variants"
    for sequence in sequences:
        for made in [sequence, *(footage.variant_of(sequence, v, root)
                                 for v in (footage.VARIANTS if variants is None else variants))]:
            link = folder / f"{made.name}{made.video.suffix}"
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(made.video.resolve())
            samplers[link.name] = ground_truth_samplers(made, spaced_distractors)
            scene_of[link.name] = sequence.name
    rows = [{**row, "half": scene_half[scene_of[row["video"]]], "scene": scene_of[row["video"]]}
            for row in generate(samplers, count, seed)]
    write_csv(rows, out)
    return {"out": str(out), "questions": len(rows), "seed": seed, "videos_folder": str(folder),
            "videos": dict(Counter(r["video"] for r in rows)),
            "needs": dict(Counter(r["need"] for r in rows)),
            "truth": dict(Counter(r["truth"] for r in rows)),
            "halves": dict(Counter(r["half"] for r in rows)), "skipped": []}
