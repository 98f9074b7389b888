"""Which kinds of things a video shows: the typed queries behind "what kinds of vehicles pass",
"which of these appears" (`kinds_seen`) and "what is the woman carrying" (`held`).

It reads the instances table, whose categories are the person detector's and the COCO object
detector's (`backend/ingest/objects.py`), and says how many of each kind were tracked; moving
things no detector could name are counted apart, as things of no known kind. The value lists the
kinds seen, most tracked first, and `typed` holds them with their counts, so that code scores
each option against them (`option_match`).
"""

from __future__ import annotations

from backend import kinds
from backend.agent.timephrases import Span
from backend.agent.video_tables import Result, Target, VideoTables, plural
from models.motion import CATEGORY as MOVING


def kinds_seen(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    during = ""
    if span is not None:
        during = f" WHERE last_seen >= {span.start} AND first_seen <= {span.end}"
    sql = (f"SELECT category, COUNT(*) AS n, MIN(first_seen) AS first FROM instances{during} "
           f"GROUP BY category ORDER BY n DESC")
    rows = tables.rows(sql)
    group = kinds.GROUP_WORDS.get(target.label or "")
    wanted = [r for r in rows if r["category"] != MOVING
              and (group is None or r["category"] in kinds.GROUPS[group])]
    unnamed = next((r["n"] for r in rows if r["category"] == MOVING), 0)
    where = f" between {span.start:.1f} and {span.end:.1f} s" if span is not None else ""
    seen = ", ".join(plural(r["n"], r["category"]) for r in wanted) or f"no {group or 'object'}"
    text = f"Kinds tracked{where}{f' ({group}s)' if group else ''}: {seen}."
    if unnamed:
        text += (f" Also {plural(unnamed, MOVING)} that no detector could name (a kind outside "
                 f"what they know, or one they missed).")
    known = [c for c in tables.categories if c != MOVING]
    text += f" The detectors can name {len(known)} kinds; anything else cannot be seen."
    return Result(text, value=", ".join(r["category"] for r in wanted), sql=sql, rows=rows,
                  support="computed" if wanted and not unnamed else "read",
                  times=[r["first"] for r in wanted],
                  typed={"kinds": {r["category"]: r["n"] for r in wanted}, "group": group,
                         "unnamed": unnamed})


# An object whose centre lies inside a person's box on at least this share of the frames it is
# seen on goes with that person: held, carried, worn or sat on (boxes cannot tell which).
_WITH_PEOPLE = 0.5


def held(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if "person" not in tables.tracked:
        return Result("No person was tracked in this video, so nothing was held by one.",
                      value="", support="none")
    during = f" AND d.t BETWEEN {span.start} AND {span.end}" if span is not None else ""
    sql = f"""
        WITH sightings AS (
            SELECT d.instance_id, d.frame,
                   MAX(CASE WHEN (d.x1 + d.x2) / 2 BETWEEN p.x1 AND p.x2
                             AND (d.y1 + d.y2) / 2 BETWEEN p.y1 AND p.y2 THEN 1 ELSE 0 END) AS inside
            FROM detections d JOIN instances i ON i.id = d.instance_id
            LEFT JOIN detections p ON p.frame = d.frame
                 AND p.instance_id IN (SELECT id FROM instances WHERE category = 'person')
            WHERE i.category NOT IN ('person', '{MOVING}'){during}
            GROUP BY d.instance_id, d.frame)
        SELECT i.category, COUNT(*) AS n, GROUP_CONCAT(i.id) AS ids
        FROM (SELECT instance_id, AVG(inside) AS share FROM sightings GROUP BY instance_id) s
        JOIN instances i ON i.id = s.instance_id
        WHERE s.share >= {_WITH_PEOPLE} GROUP BY i.category ORDER BY n DESC"""
    rows = tables.rows(sql)
    where = f" between {span.start:.1f} and {span.end:.1f} s" if span is not None else ""
    if not rows:
        return Result(f"No object of a kind the detectors name was seen with a person{where} "
                      f"(inside a person's box most of the time it was seen).", value="",
                      sql=sql, rows=rows, support="read", typed=_held_kinds([]))
    seen = ", ".join(plural(r["n"], r["category"]) for r in rows)
    ids = [int(i) for r in rows for i in str(r["ids"]).split(",")]
    return Result(f"Seen with people{where} (inside a person's box most of the time: held, "
                  f"carried, worn or sat on): {seen}.",
                  value=", ".join(r["category"] for r in rows), sql=sql, rows=rows,
                  instance_ids=ids, typed=_held_kinds(rows))


def _held_kinds(rows: list[dict]) -> dict:
    return {"kinds": {r["category"]: r["n"] for r in rows}, "group": None, "unnamed": 0}
