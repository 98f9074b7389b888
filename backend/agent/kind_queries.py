"""Which kinds of things a video shows: the typed query behind "what kinds of vehicles pass",
"which of these appears" and "is there a boat".

It reads the instances table, whose categories are the person detector's and the COCO object
detector's (`backend/ingest/objects.py`), and says how many of each kind were tracked; moving
things no detector could name are counted apart, as things of no known kind. The value lists the
kinds seen, most tracked first, so that an option naming exactly the kinds seen is picked by code
(`options.option_for_kinds`).
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
    sql = f"SELECT category, COUNT(*) AS n FROM instances{during} GROUP BY category ORDER BY n DESC"
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
                  support="computed" if wanted and not unnamed else "read")
