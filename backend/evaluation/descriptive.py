"""A workload of descriptive questions (what kinds, what colour, where on screen, what is shown
or said), to measure whether code decides them: routing, option matching and the answer path.

Truth comes from each video's own tables (`truth` = `tables`), so a miss here is never the
detector's: it is the question not reaching the evidence, or the pick contradicting it.
Options are paraphrased as people write them ('lorries and cars', 'in the lower right corner',
'navy' for dark blue); nothing is keyed to a clip or a dev question. Videos are split into a
tuning and a reporting half (column `half`), whole, so no video is in both, and each need two
videos have is in both halves.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Callable

from backend import kinds
from backend.agent.meaning import place
from backend.agent.option_match import COLOUR_WORDS, colour_distance, colours_in
from backend.config import Settings
from backend.errors import InputError
from backend.evaluation.scenes import HALVES
from backend.evaluation.workload import (N_OPTIONS, Fact, Sampler, generate,
                                         said_at_sampler, video_files, write_csv)
from models.motion import CATEGORY as MOVING

# need -> wordings, as in `workload.NEEDS` ({things}: a group's plural; {thing}, {ordinal}).
NEEDS: dict[str, tuple[str, list[str]]] = {
    "kinds_present": ("DO", [
        "which kinds of {things} appear in the video",
        "what types of {things} can be seen",
        "what sort of {things} show up in the clip",
        "which {things} are in the video",
        "what {things} does the video show",
    ]),
    "object_seen": ("DO", [
        "which of these can be seen in the video",
        "which of the following appears in the clip",
        "what kind of object is in the video",
        "which of these things shows up",
    ]),
    "colour_of": ("DO", [
        "what colour is the {ordinal} {thing} to appear",
        "what is the colour of the {ordinal} {thing} that appears",
        "the {ordinal} {thing} seen is which colour",
        "what color is the {ordinal} {thing} in the video",
    ]),
    "text_where": ("DL", [
        "where on the screen is the text shown",
        "in which part of the picture is the text written",
        "where is the on-screen text displayed",
        "where in the frame does the text appear",
    ]),
    "said_at": ("TC", [
        "what word is said {when}",
        "which word does the speaker say {when}",
        "{when}, what word can be heard",
    ]),
}

_OTHER = {"top": "upper", "bottom": "lower"}
_GROUP_PLURAL = {"vehicle": "vehicles", "animal": "animals", "appliance": "appliances"}
# Colours far apart (neither the same nor neighbours, `option_match`): the distractors.
_COLOURS = sorted(set(COLOUR_WORDS.values()) - {"beige"})
# Ways of saying a third of the picture (`meaning.place` reads them all back): its two words,
# hyphened, and a corner or edge in other words.
_PLACES = {(v, h): [f"{v} {h}", f"{v}-{h}", f"in the {_OTHER[v]} {h} corner"]
           for v in ("top", "bottom") for h in ("left", "right")}
_PLACES.update({(v, "centre"): [f"{v} centre", f"{v} center", f"at the {v} in the middle"]
                for v in ("top", "bottom")})
_PLACES[("middle", "centre")] = ["centre", "center", "in the middle"]


def _word_for(kind: str, rng: random.Random, many: bool) -> str:
    """A kind as an option says it: its name or a synonym, plural or with an article."""
    word = rng.choice([kind, *kinds.SYNONYMS.get(kind, ())]) if kind != "person" else "person"
    if many:
        return kinds.plural(word)
    if kinds.plural(word) == word:  # skis, scissors, sheep
        return f"some {word}"
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _join(words: list[str], rng: random.Random) -> str:
    rng.shuffle(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _kinds_present(tables) -> Sampler | None:
    categories = set(tables.categories)
    rows = tables.rows("SELECT category, COUNT(*) AS n FROM instances GROUP BY category")
    seen = {r["category"] for r in rows}
    if MOVING in seen:
        return None  # an unnamed moving thing may be of any kind: the truth is not in the tables
    groups = [g for g in _GROUP_PLURAL if categories & set(kinds.GROUPS[g])]
    if not groups:
        return None

    def sample(rng: random.Random) -> Fact | None:
        group = rng.choice(groups)
        members = [k for k in kinds.GROUPS[group] if k in categories]
        present = sorted(seen & set(members))
        absent = [k for k in members if k not in seen]
        if len(absent) < 3:
            return None
        right = (_join([_word_for(k, rng, True) for k in present[:2]], rng) if present
                 else f"no {_GROUP_PLURAL[group]}")
        wrong = [_join([_word_for(k, rng, True) for k in rng.sample(absent, rng.choice((1, 2)))],
                       rng) for _ in range(N_OPTIONS + 2)]
        if present:
            wrong.append(f"no {_GROUP_PLURAL[group]}")
        wrong = list(dict.fromkeys(w for w in wrong if w != right))
        if len(wrong) < N_OPTIONS - 1 or len(present) > 2:
            return None
        return Fact("kinds_present", "tables", right, tuple(wrong[:N_OPTIONS - 1]), None,
                    (("things", _GROUP_PLURAL[group]),))
    return sample


def _object_seen(tables) -> Sampler | None:
    rows = tables.rows("SELECT category, COUNT(*) AS n FROM instances GROUP BY category")
    seen = {r["category"] for r in rows}
    present = sorted(seen - {MOVING, "person"})
    # With unnamed moving things about, only kinds that never move by themselves are absent
    # for sure.
    absent = [k for k in tables.categories if k not in seen and k != MOVING
              and (MOVING not in seen or k not in kinds.MOVING)]
    if not present or len(absent) < N_OPTIONS - 1:
        return None

    def sample(rng: random.Random) -> Fact:
        right = _word_for(rng.choice(present), rng, False)
        wrong = tuple(_word_for(k, rng, False) for k in rng.sample(absent, N_OPTIONS - 1))
        return Fact("object_seen", "tables", right, wrong, None, ())
    return sample


def _colour_of(tables) -> Sampler | None:
    rows = tables.rows("SELECT id, category, appearance, first_seen FROM instances WHERE "
                       f"category != '{MOVING}' ORDER BY first_seen, id")
    by_kind: dict[str, list[dict]] = {}
    for r in rows:
        by_kind.setdefault(r["category"], []).append(r)
    askable = []
    for kind, found in by_kind.items():
        for ordinal, r in (("first", found[0]), ("last", found[-1])):
            colours = colours_in(r["appearance"] or "")
            # One colour, and the first or last of its kind not tied in time with another.
            tied = [x for x in found if x["first_seen"] == r["first_seen"]]
            if len(colours) == 1 and len(tied) == 1 and kind != "person":
                askable.append((kind, ordinal, colours[0]))
    if not askable:
        return None

    def sample(rng: random.Random) -> Fact:
        kind, ordinal, colour = rng.choice(askable)
        wrong = tuple(rng.sample([c for c in _COLOURS if colour_distance(c, colour) == 2],
                                 N_OPTIONS - 1))
        return Fact("colour_of", "tables", colour, wrong, None,
                    (("thing", kind), ("ordinal", ordinal)))
    return sample


def _text_where(tables) -> Sampler | None:
    if tables.no_ocr():
        return None
    rows = tables.rows("SELECT x1, y1, x2, y2 FROM ocr")
    places = Counter(tables.position(r) for r in rows)
    if not places:
        return None
    where, reads = places.most_common(1)[0]
    third = place(where)
    if reads < 0.8 * sum(places.values()) or third not in _PLACES:
        return None  # text all over the picture: no one right place

    def sample(rng: random.Random) -> Fact:
        right = rng.choice(_PLACES[third])
        wrong = tuple(rng.choice(_PLACES[p]) for p in rng.sample(
            [p for p in _PLACES if p != third], N_OPTIONS - 1))
        return Fact("text_where", "tables", right, wrong, None, ())
    return sample


SAMPLERS: dict[str, Callable] = {"kinds_present": _kinds_present, "object_seen": _object_seen,
                                 "colour_of": _colour_of, "text_where": _text_where,
                                 "said_at": said_at_sampler}


def samplers(tables) -> dict[str, Sampler]:
    return {need: s for need, make in SAMPLERS.items() if (s := make(tables))}


def split(found: dict[str, dict], seed: int) -> dict[str, str]:
    """Videos into the two halves, whole: in a seeded order, each to the half that holds fewer
    videos with its rarest need (so every need two videos have is asked in both halves), the
    smaller half on a tie."""
    order = sorted(found)
    random.Random(seed).shuffle(order)
    holders = Counter(need for needs in found.values() for need in needs)
    held = {half: Counter() for half in HALVES}
    halves: dict[str, str] = {}
    for video in order:
        rarest = min(found[video], key=lambda need: (holders[need], need))
        half = min(HALVES, key=lambda h: (held[h][rarest], sum(v == h for v in halves.values())))
        halves[video] = half
        held[half].update(found[video].keys())
    return halves


def make_descriptive_workload(videos: Path, out: Path, settings: Settings, count: int = 240,
                              seed: int = 0,
                              progress: Callable[[str], None] = lambda s: None) -> dict:
    """Ingest each video of the folder (the library keeps it), draw descriptive questions from
    its tables and write them with a `half` column: videos alternate between the halves in a
    seeded order."""
    from backend.agent.video_tables import VideoTables
    from backend.ingest.pipeline import ingest
    from backend.library import Library

    found, skipped = {}, []
    for path in video_files(videos):
        progress(path.name)
        entry = Library(settings.home).get(ingest(path, settings).video_id)
        needs = samplers(VideoTables(entry.db_path, timeout_s=settings.sql_timeout_s,
                                     max_rows=1_000_000))
        if needs:
            found[path.name] = needs
        else:
            skipped.append({"video": path.name, "reason": "nothing descriptive in its tables"})
    if not found:
        raise InputError(f"No video in {videos} gives a descriptive question.")
    halves = split(found, seed)
    rows = [{**row, "half": halves[row["video"]]} for row in generate(found, count, seed, NEEDS)]
    write_csv(rows, out)
    return {"out": str(out), "questions": len(rows), "seed": seed,
            "videos": dict(Counter(r["video"] for r in rows)),
            "needs": dict(Counter(r["need"] for r in rows)),
            "truth": dict(Counter(r["truth"] for r in rows)),
            "halves": dict(Counter(r["half"] for r in rows)), "skipped": skipped}
