"""Where things are in the picture, how they move and what they look like: the typed queries
behind "which way do most people walk" (`movement`), "at 12 s, where is the cyclist" (`position`)
and "what colour is the first car" (`appearance`).

Each reads the instances and detections tables for the target (`video_tables.instance_sql`) and
states what it found with the boxes and times it rests on; `typed` holds the ways, places or
colours for code to score options against (`option_match`). Where one thing is relative to
another is `relation_queries`.
"""

from __future__ import annotations

import re
from collections import Counter

from backend import places
from backend.agent import meaning, option_match
from backend.agent.activity_queries import has
from backend.agent.timephrases import Span
from backend.agent.video_tables import (HOW_MANY, YES_NO, Result, Target, VideoTables, id_list,
                                        instance_rows, instance_sql, none_appears, plural,
                                        unseen_target)
from backend.ingest import describe


def movement(tables: VideoTables, target: Target, span: Span | None, words: str,
             question: str = "") -> Result:
    """How the objects asked about move: one object's path, or the tracks of a kind by the way
    they go, the commonest the value; how many go the way a how-many question names, where it
    names one ("how many people walk to the right")."""
    if unseen := unseen_target(tables, target):
        return unseen
    sql, rows = instance_rows(tables, target, "i.id, i.category, i.action, i.first_seen, "
                                               "i.last_seen", "i.id")
    if not rows:
        return none_appears(target, sql)
    states = _motions(rows)
    asked = meaning.motion(question) if not meaning.ways(question) else None
    if target.instance is not None:
        r = rows[0]
        path = _path(tables, r["id"])
        text = f"#{r['id']} {r['action']}{path} ({r['first_seen']:.1f}-{r['last_seen']:.1f} s)."
        value = " and ".join(describe.directions(r["action"]))
        if YES_NO.search(question) and asked and (yes := _whether(states, asked, question,
                                                                  one=True)) is not None:
            value, text = ("yes" if yes else "no"), f"{'Yes' if yes else 'No'}: {text}"
        return Result(text, value=value, sql=sql, rows=rows, times=[r["first_seen"]],
                      instance_ids=[r["id"]], typed={"ways": _ways(rows),
                                                      "motions": _counted(states)})
    tally: dict[str, list[int]] = {}
    for r in rows:
        for direction in describe.directions(r["action"]):
            tally.setdefault(direction, []).append(r["id"])
    ranked = sorted(tally.items(), key=lambda kv: -len(kv[1]))
    parts = "; ".join(f"{len(ids)} {d} ({id_list(ids[:8])})" for d, ids in ranked)
    value = _leader(Counter({d: len(ids) for d, ids in ranked}))
    summary = f"most: {value}" if value else "no single direction leads"
    ways = _ways(rows)
    text = f"Of {plural(len(rows), target.label)}, by direction: {parts}. ({summary})"
    typed: dict = {"ways": ways, "motions": _counted(states)}
    if HOW_MANY.search(question) and (way := meaning.direction(question)):
        going = [r["id"] for r in rows if way in map(meaning.direction,
                                                      describe.directions(r["action"]))]
        value = str(len(going))
        said = _some_of(going, len(rows), target.label, (f"goes {way}", f"go {way}"))
        # The count is code's sentence: left to read it, the planner had gone on to another
        # tool and answered that it cannot tell.
        text, typed["said"] = f"{said}\n{text}", said
    elif HOW_MANY.search(question) and asked:
        value = str(len(states[asked]))
        said = _some_of(states[asked], len(rows), target.label, _STATE_SAID[asked])
        text, typed["said"] = f"{said}\n{text}", said
    elif YES_NO.search(question) and asked and \
            (yes := _whether(states, asked, question, one=len(rows) == 1)) is not None:
        # "Are the cars parked?", "is anyone moving?": the tracks that moved over their life
        # against those that stayed in place, compared in code.
        value = "yes" if yes else "no"
        known = sum(map(len, states.values()))
        text = (f"{value.capitalize()}: of {plural(known, target.label)} seen long enough to "
                f"tell, {_said(states, 'moving')}; {_said(states, 'still')}.\n{text}")
    elif meaning.ways(question):
        # "Do they go left or right?": the tally is the answer, said by code. Asked without
        # options, a model read "towards" from 13 towards against 26 away.
        typed["said"] = text
    return Result(text, value=value, sql=sql, rows=rows, times=[r["first_seen"] for r in rows],
                  instance_ids=[r["id"] for r in rows], typed=typed)


def _ways(rows: list[dict]) -> dict[str, int]:
    """{'rightwards': tracks, ...}: the ways across or along the picture the tracks go, in
    `meaning.direction`'s words, for options to be scored against."""
    ways: dict[str, int] = {}
    for r in rows:
        for phrase in describe.directions(r["action"]):
            if way := meaning.direction(phrase):
                ways[way] = ways.get(way, 0) + 1
    return ways


_STATE_SAID = {"moving": ("moves", "move"), "still": ("stays in place", "stay in place")}
# Whether a yes-or-no question asks of any one of them ("is anyone moving", "is there a parked
# car") or of all; else it asks of most ("are the cars parked").
_ANY = re.compile(r"\b(?:any|anyone|anybody|anything|some|someone|somebody|something|there)\b",
                  re.I)
_ALL = re.compile(r"\b(?:all|every|everyone|everybody|each)\b", re.I)


def _motions(rows: list[dict]) -> dict[str, list[int]]:
    """{'moving': ids, 'still': ids}: the tracks that moved over their life and those that
    stayed in place (`describe.moves`); those seen too briefly to tell are in neither."""
    states: dict[str, list[int]] = {"moving": [], "still": []}
    for r in rows:
        if (moved := describe.moves(r["action"])) is not None:
            states["moving" if moved else "still"].append(r["id"])
    return states


def _counted(states: dict[str, list[int]]) -> dict[str, int]:
    """{'moving': tracks, 'still': tracks}, for options to be scored against."""
    return {state: len(ids) for state, ids in states.items()}


def _said(states: dict[str, list[int]], state: str) -> str:
    """'3 stay in place (#1, #45, #57)'."""
    return _counted_ids(states[state], _STATE_SAID[state])


def _some_of(ids: list[int], total: int, label: str, verbs: tuple[str, str]) -> str:
    """'3 of 52 cars stay in place (#1, #45, #57).'."""
    return _counted_ids(ids, verbs, f" of {plural(total, label)}") + "."


def _counted_ids(ids: list[int], verbs: tuple[str, str], of: str = "") -> str:
    """How many, with the verb (one, many) that fits and the first ids."""
    return f"{len(ids)}{of} {verbs[len(ids) != 1]}" + (f" ({id_list(ids[:8])})" if ids else "")


def _whether(states: dict[str, list[int]], asked: str, question: str, one: bool) -> bool | None:
    """Whether the things asked about were in the state asked ('moving' or 'still'): the one
    thing, any of them, all of them, or most of them, as the question asks; None where none
    was seen long enough to tell."""
    known = sum(map(len, states.values()))
    if not known:
        return None
    n = len(states[asked])
    if one or _ALL.search(question):
        return n == known
    if _ANY.search(question):
        return n > 0
    return n > known / 2


def _distance(row: dict, size: tuple[int, int]) -> str:
    """How far from the camera a sighting's box is, from its size (`places.distance`)."""
    width, height = size
    return places.distance((row["y2"] - row["y1"]) / max(1, height),
                           (row["x2"] - row["x1"]) / max(1, width))


_SAID_DISTANCE = {"near": "near the camera", "midway": "at a middle distance from the camera",
                  "far": "far from the camera"}
# A question about how far: its value is the distance, not the place.
_HOW_FAR = re.compile(r"\bhow (?:far|close|near)\b|\b(?:near|close to|far from) the camera\b",
                      re.I)


def position(tables: VideoTables, target: Target, span: Span | None, words: str,
             question: str = "") -> Result:
    """Where in the picture the objects asked about are, and how far from the camera: at the
    sampled frame nearest a moment, else on every frame they were seen (or seen in the
    interval), each place with its box and time. The value is the commonest place, or the
    commonest distance where the question asks how far."""
    if unseen := unseen_target(tables, target):
        return unseen
    note = ""
    if span is not None and span.is_moment:
        # The sampled frame nearest the moment; where the thing is not on it, its own nearest
        # sighting, said as such.
        frame = tables.rows(f"SELECT frame, t FROM detections ORDER BY ABS(t - {span.start}) LIMIT 1")
        own = tables.rows(f"SELECT d.frame, d.t FROM detections d JOIN instances i ON i.id = "
                          f"d.instance_id WHERE 1 = 1{instance_sql(target)} "
                          f"ORDER BY ABS(d.t - {span.start}) LIMIT 1")
        if own and frame and own[0]["frame"] != frame[0]["frame"]:
            note = f"No {target.label} is in view at {frame[0]['t']:.1f} s; the nearest sighting: "
        during = f" AND d.frame = {own[0]['frame']}" if own else " AND 0"
    else:
        during = f" AND d.t BETWEEN {span.start} AND {span.end}" if span is not None else ""
    sql = (f"SELECT d.instance_id, i.category, d.t, d.x1, d.y1, d.x2, d.y2 FROM detections d "
           f"JOIN instances i ON i.id = d.instance_id WHERE 1 = 1{instance_sql(target)}{during} "
           f"ORDER BY d.t, d.instance_id")
    rows = tables.rows(sql)
    if not rows:
        return none_appears(target, sql)
    size = tables.video["width"], tables.video["height"]
    where = Counter(tables.position(r) for r in rows)
    far = Counter(_distance(r, size) for r in rows)
    shown = "; ".join(f"#{r['instance_id']} {r['category']} at the {tables.position(r)}, "
                      f"{_SAID_DISTANCE[_distance(r, size)]} (box {r['x1']:.0f},{r['y1']:.0f}-"
                      f"{r['x2']:.0f},{r['y2']:.0f} at {r['t']:.1f} s)" for r in rows[:8])
    more = f"; and {len(rows) - 8} more sightings" if len(rows) > 8 else ""
    how_far = bool(_HOW_FAR.search(question))
    value = _leader(far if how_far else where)
    typed = {"places": dict(where), "distances": dict(far), "where": "where it was seen"}
    if span is not None and span.is_moment and len(rows) <= _SAID_AT_ONCE:
        # Where things are at a moment is code's sentence: a model reading the boxes had put
        # a car at the upper left for the lower left.
        typed["said"] = note + "; ".join(
            f"#{r['instance_id']} {r['category']} is at the {tables.position(r)} of the picture, "
            f"{_SAID_DISTANCE[_distance(r, size)]} (at {r['t']:.1f} s)" for r in rows) + "."
    return Result(f"{note}Where in the picture (thirds of its width and height): {shown}{more}. "
                  f"Sightings by place: {_tally(where)}; by distance from the camera (from the "
                  f"box's size): {_tally(far, _SAID_DISTANCE)}.",
                  value=_SAID_DISTANCE[value] if how_far and value else value, sql=sql, rows=rows,
                  times=sorted({r["t"] for r in rows})[:20],
                  instance_ids=list(dict.fromkeys(r["instance_id"] for r in rows)), typed=typed)


_SAID_AT_ONCE = 8  # things at one moment code states one by one; more are a tally to read


def _leader(counts: Counter) -> str:
    """The one commonest, or '' where two or more are as common."""
    ranked = counts.most_common(2)
    return ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else ""


def _tally(counts: Counter, said: dict | None = None) -> str:
    return ", ".join(f"{(said or {}).get(p, p)} {n}" for p, n in counts.most_common())


def _path(tables: VideoTables, instance_id: int) -> str:
    ends = tables.rows(f"SELECT t, x1, y1, x2, y2 FROM detections WHERE instance_id = {instance_id} "
                       f"AND (t = (SELECT MIN(t) FROM detections WHERE instance_id = {instance_id}) "
                       f"OR t = (SELECT MAX(t) FROM detections WHERE instance_id = {instance_id})) "
                       f"ORDER BY t")
    if len(ends) < 2:
        return ""
    return f", from the {tables.position(ends[0])} to the {tables.position(ends[-1])}"


_LOOKS_LISTED = 20  # things whose colours are listed, the first to appear


def appearance(tables: VideoTables, target: Target, span: Span | None, words: str,
               ordinal: str = "", part: str = "") -> Result:
    """Colours of the objects asked about; of the first or last to appear when the question
    says which ('what colour is the first car'); of a person's top or bottom only when it
    names a garment ('the woman's coat')."""
    if unseen := unseen_target(tables, target):
        return unseen
    order = {"first": "i.first_seen LIMIT 1", "last": "i.first_seen DESC LIMIT 1"}
    # Videos ingested before the shares were kept have no colours column.
    shared = ", i.colours" if has(tables, "instances", "colours") else ""
    sql, rows = instance_rows(tables, target,
                               f"i.id, i.category, i.appearance, i.first_seen{shared}",
                               order.get(ordinal, f"i.first_seen LIMIT {_LOOKS_LISTED}"))
    if not rows:
        return none_appears(target, sql)
    which = f"The {ordinal} {target.label} to appear: " if ordinal in order else ""
    said = [describe.worn(r["appearance"], part) if part else r["appearance"] for r in rows]
    # Ingest stores no colour where the pixels did not clearly agree on one (`colours.read`):
    # say so, and give no value, so that no colour is claimed for it.
    listed = "; ".join(f"#{r['id']}: {r['appearance']}"
                       + ("" if option_match.colours_in(text) else " (no clear colour measured)")
                       + (f" (its pixels: {r['colours']})" if r.get("colours") else "")
                       for r, text in zip(rows, said))
    colours = [c for text in said for c in option_match.colours_in(text)]
    value = said[0] if len(rows) == 1 and colours else ""
    typed = {"colours": list(dict.fromkeys(colours))}
    # Of one thing, the options' colours can also be weighed by its pixels' shares.
    if len(rows) == 1 and (pixels := describe.shares(rows[0].get("colours"), part)):
        typed["shares"] = pixels
    if len(rows) > 1:
        # Of several, code says who wears what: asked "what are the people wearing", a reading
        # of the eleven people's list took ten calls to answer with a single person's colours.
        typed["said"] = _worn_by(rows, said, part, target.label)
    return Result(f"{which}Colours measured from the boxes: {listed}.", value=value, sql=sql,
                  rows=rows, times=[r["first_seen"] for r in rows],
                  instance_ids=[r["id"] for r in rows],
                  support="computed" if value or len(rows) > 1 else "read", typed=typed)


def _worn_by(rows: list[dict], said: list[str], part: str, label: str) -> str:
    """Several things' measured colours, the commonest look first: '12 people: #2, #3, #5:
    person in black top and black bottom; #1: person in red top and black bottom; ...'."""
    groups: dict[str, list[int]] = {}
    for r, text in zip(rows, said):
        look = (f"{text} {part}" if part else text) if option_match.colours_in(text) \
            else "no clear colour measured"
        groups.setdefault(look, []).append(r["id"])
    first = " (the first to appear)" * (len(rows) >= _LOOKS_LISTED)
    return f"{plural(len(rows), label)}{first}: " + "; ".join(
        f"{id_list(ids)}: {look}" for look, ids in
        sorted(groups.items(), key=lambda kv: -len(kv[1]))) + "."
