"""Where one thing is relative to another: the typed query behind "is the man to the left of the
car?", "is the cat on the sofa?" and "where is the dog relative to the person?".

Every sampled frame on which both were tracked (boxes held across an occlusion left out) gives
the relations their two boxes show (`places.relations`); the answer counts on how many of those
frames each relation held, and `typed` holds the counts, so that code scores options that say a
relation (`option_match`). The value is the relation that held on more than half of them, if
one did; a yes-or-no question about one relation is answered by whether it did; and "what is
on the sofa?" by the things it held of on more than half of their frames with the sofa, their
kinds typed for options that name kinds.
"""

from __future__ import annotations

import math
from collections import Counter

from backend import kinds, places
from backend.agent.timephrases import Span
from backend.agent.video_tables import (YES_NO, Result, Target, VideoTables, instance_sql,
                                        parse_target, plural, unseen_target)
from backend.sql_runner import run_query

# Pairs of sightings read at most: a long video's frames are taken evenly to stay within this.
_MOST_PAIRS = 4000
# A relation is the answer where it held on more than this share of the frames both were seen.
HOLDS = 0.5

def relation(tables: VideoTables, target: Target, span: Span | None, words: str,
             question: str = "") -> Result:
    """Where `target` is relative to the thing `words` names ('car', '#2')."""
    other = parse_target(words)
    if not words.strip():
        return Result("A relation needs the other thing it is relative to (words: 'car', '#2').",
                      support="none")
    for thing in (target, other):
        if unseen := unseen_target(tables, thing):
            return unseen
        if thing.instance is None and thing.category is not None and \
                not set(kinds.detected_as(thing.category)) & tables.tracked:
            # A kind the detectors name but did not find here (a table seen from above): say
            # so, and what was found, rather than that the two were never seen together.
            found = tables.rows("SELECT category, COUNT(*) AS n FROM instances GROUP BY category "
                                "ORDER BY n DESC LIMIT 8")
            return Result(f"No {thing.label} was tracked in this video (the detectors name that "
                          f"kind, but found none here: it may be there unseen), so where things "
                          f"are relative to it cannot be told. Tracked: "
                          f"{', '.join(plural(r['n'], r['category']) for r in found) or 'nothing'}.",
                          value="", support="unobserved")
    pairs = ("FROM detections a JOIN instances ia ON ia.id = a.instance_id "
             "JOIN detections b ON b.frame = a.frame AND b.instance_id != a.instance_id "
             "JOIN instances ib ON ib.id = b.instance_id")
    where = (f"WHERE a.confidence > 0 AND b.confidence > 0{instance_sql(target, 'ia')}"
             f"{instance_sql(other, 'ib')}")
    if span is not None:
        where += f" AND a.t BETWEEN {span.start} AND {span.end}"
    total = tables.rows(f"SELECT COUNT(*) AS n {pairs} {where}")[0]["n"]
    label = f"{_named(target)} is relative to {_named(other)}"
    if not total:
        return Result(f"No frame shows {_named(target)} and {_named(other)} together, so where "
                      f"{label} was never seen.", value="", support="read")
    # Every stride-th sampled frame, so a long video's pairs stay within _MOST_PAIRS.
    stride = math.ceil(total / _MOST_PAIRS)
    sql = (f"WITH f AS (SELECT frame, ROW_NUMBER() OVER (ORDER BY frame) AS k "
           f"FROM (SELECT DISTINCT frame FROM detections)) "
           f"SELECT a.instance_id AS a_id, ia.category AS a_kind, b.instance_id AS b_id, a.t, "
           f"a.x1 AS ax1, a.y1 AS ay1, "
           f"a.x2 AS ax2, a.y2 AS ay2, b.x1 AS bx1, b.y1 AS by1, b.x2 AS bx2, b.y2 AS by2 "
           f"{pairs} JOIN f ON f.frame = a.frame {where} AND f.k % {stride} = 0 ORDER BY a.t")
    rows = run_query(tables.db_path, sql, timeout_s=tables.timeout_s,
                     max_rows=_MOST_PAIRS).as_dicts()
    each = [places.relations((row["ax1"], row["ay1"], row["ax2"], row["ay2"]),
                             (row["bx1"], row["by1"], row["bx2"], row["by2"])) for row in rows]
    held = Counter(r for relations in each for r in relations)
    n = len(rows)
    tally = ", ".join(f"{r} {held[r]}" for r in places.RELATIONS if held[r]) or "none"
    ids = sorted({row["a_id"] for row in rows} | {row["b_id"] for row in rows})
    first = rows[0]
    example = (f"e.g. at {first['t']:.1f} s #{first['a_id']} box {first['ax1']:.0f},"
               f"{first['ay1']:.0f}-{first['ax2']:.0f},{first['ay2']:.0f} and #{first['b_id']} "
               f"box {first['bx1']:.0f},{first['by1']:.0f}-{first['bx2']:.0f},{first['by2']:.0f}")
    leading = max(places.RELATIONS, key=lambda r: held[r])
    value = leading if held[leading] > HOLDS * n else ""
    asked = places.relation_said(question)
    text = (f"Where {label}, on {n} frames where both were tracked{_every(stride)} (boxes: "
            f"left or right by their centres, in front or behind by their bottoms, on where one "
            f"rests on the other): {tally}; {example}.")
    typed = {"relations": {r: held[r] for r in places.RELATIONS}, "frames": n}
    if asked and target.instance is None and target.category is None:
        # "What is on the sofa?": the things the relation held of on most of their frames.
        found = _holding(rows, each, asked[0])
        value = ", ".join(f"#{i} {kind}" for i, kind in found)
        said = (f"{asked[0].capitalize()} {_named(other)} on most of the frames each was seen "
                f"with it: {value or 'nothing'}.")
        # A plain dict: dataclasses.asdict rebuilds a Counter from its items, keys made pairs.
        # 'said': the answer as code states it; a model retelling the list turned it round
        # ("person 1 is on the left of person 2" for who is left of person 1).
        typed = {"kinds": dict(Counter(kind for _, kind in found)), "group": None, "unnamed": 0,
                 "said": said}
        text += f" {said}"
        ids = [i for i, _ in found] or ids
    elif asked and YES_NO.search(question):
        value = "yes" if held[asked[0]] > HOLDS * n else "no"
        text += f" '{asked[0]}' held on {held[asked[0]]} of {n}."
    return Result(text, value=value, sql=sql, rows=rows[:20], support="computed" if value
                  else "read", times=sorted({row["t"] for row in rows})[:20], instance_ids=ids,
                  typed=typed)


def _holding(rows: list[dict], each: list[set[str]], said: str) -> list[tuple[int, str]]:
    """(id, kind) of each thing the relation held of on more than HOLDS of its frames, from
    every row's relations (`each`)."""
    seen, held, kind = Counter(), Counter(), {}
    for row, relations in zip(rows, each):
        seen[row["a_id"]] += 1
        kind[row["a_id"]] = row["a_kind"]
        held[row["a_id"]] += said in relations
    return [(i, kind[i]) for i in sorted(seen) if held[i] > HOLDS * seen[i]]


def _named(thing: Target) -> str:
    return thing.label if thing.instance is not None else f"the {thing.label}"


def _every(stride: int) -> str:
    return "" if stride == 1 else f" (every {stride}th frame of them)"
