"""The one of several a question picks by its place in the picture (furthest left or right,
nearest to or farthest from the camera) or by its colours ("the man in the red shirt", "the
white van").

A question about one of several, picked by its place, was answered for all of them together:
the way most of them went, not the way that one went. Here code finds that one: on the sampled
frame where the most of the kind are in view at once (within the time the question names, if
any), the one furthest left, right, nearest (tallest box) or farthest (shortest box). A group
is what a viewer calls the leftmost one of; a lone walker crossing the picture is leftmost only
at its start. A colour picks the one whose measured look has it, where exactly one has.
"""

from __future__ import annotations

import re

from backend import kinds
from backend.agent.option_match import colours_in
from backend.agent.timephrases import Span
from backend.agent.video_tables import VideoTables, quoted
from backend.ingest.describe import GARMENTS, worn

# Word in the question -> (SQL expression over a detection's box, ascending order or not).
_PICKS = (
    (r"\b(?:left ?most|furthest left|farthest left|on the (?:far )?left)\b", "(d.x1 + d.x2) / 2", "ASC"),
    (r"\b(?:right ?most|furthest right|farthest right|on the (?:far )?right)\b", "(d.x1 + d.x2) / 2",
     "DESC"),
    # Near and far only of the camera: "the car nearest the bus" is another question.
    (r"\b(?:nearest|closest) (?:to )?(?:the )?(?:camera|viewer)\b|\bin the foreground\b",
     "d.y2 - d.y1", "DESC"),
    (r"\b(?:farthest|furthest) (?:from|away from) (?:the )?(?:camera|viewer)\b|"
     r"\bin the background\b", "d.y2 - d.y1", "ASC"),
)


def asked(question: str) -> tuple[str, str] | None:
    """(box expression, order) of the place a question picks its one by, or None."""
    for pattern, expression, order in _PICKS:
        if re.search(pattern, question, re.I):
            return expression, order
    return None


def pick(tables: VideoTables, kind: str, question: str, span: Span | None) -> int | None:
    """The instance of `kind` the question picks by its place, or None when it picks none or
    fewer than two of the kind are ever in view together (then there is nothing to pick from)."""
    how = asked(question)
    if how is None or not kind:
        return None
    expression, order = how
    of_kind = f"i.category IN ({', '.join(quoted(k) for k in kinds.detected_as(kind))})"
    during = f" AND d.t BETWEEN {span.start - 0.5} AND {span.end + 0.5}" if span else ""
    busiest = tables.rows(
        f"SELECT d.frame, COUNT(*) AS n FROM detections d JOIN instances i ON i.id = "
        f"d.instance_id WHERE {of_kind}{during} GROUP BY d.frame ORDER BY n DESC, d.frame LIMIT 1")
    if not busiest or busiest[0]["n"] < 2:
        return None
    chosen = tables.rows(
        f"SELECT d.instance_id FROM detections d JOIN instances i ON i.id = d.instance_id "
        f"WHERE {of_kind} AND d.frame = {busiest[0]['frame']} ORDER BY {expression} {order} "
        f"LIMIT 1")
    return chosen[0]["instance_id"] if chosen else None


# "In red", "wearing a blue shirt", "with the white jacket": a colour worn, then maybe a garment.
_WORN = re.compile(r"\b(in|wearing|with)\s+(?:a |an |the |his |her |their )?((?:dark |light )?"
                   r"[a-z]+)(?:\s+([a-z-]+))?", re.I)


def look_asked(question: str, kind: str) -> tuple[str, str] | None:
    """(colour, part) a question picks one of `kind` by: worn by a person ("the man in red",
    "the woman wearing a blue shirt": part 'top'), or said of the thing ("the white van": part
    ''); None for none. A colour before another kind ("the man in the red car") picks nobody."""
    if kind == "person":
        for found in _WORN.finditer(question):
            colour, after = colours_in(found.group(2)), (found.group(3) or "").lower()
            if not colour or (found.group(1).lower() == "with" and after not in GARMENTS):
                continue
            if after in GARMENTS:
                return colour[0], GARMENTS[after]
            if not kinds.named(after):
                return colour[0], ""
        return None
    words = re.findall(r"[a-z]+", question.lower())
    for i in range(len(words) - 1):
        for size in (2, 1):  # "dark blue car" before "blue car"
            colour = colours_in(" ".join(words[i:i + size])) if i + size < len(words) else []
            if colour and len(colour) == 1 and kinds.named(words[i + size]) == [kind]:
                return colour[0], ""
    return None


_SIGHTINGS = 3  # a track seen fewer times is a fragment, no one to pick by colour


def pick_by_look(tables: VideoTables, kind: str, question: str) -> int | None:
    """The one instance of `kind` seen at least `_SIGHTINGS` times whose measured look has the
    colour the question picks it by (of the part it names), or None where none or several
    have it."""
    asked = look_asked(question, kind) if kind else None
    if asked is None:
        return None
    colour, part = asked
    of_kind = f"i.category IN ({', '.join(quoted(k) for k in kinds.detected_as(kind))})"
    # A fragment of a track seen once or twice has a colour of those sightings and no way it
    # goes: picked by a white top, a two-sighting fragment was said to come nearer.
    rows = tables.rows(f"SELECT i.id, i.appearance FROM instances i WHERE {of_kind} AND (SELECT "
                       f"COUNT(*) FROM detections d WHERE d.instance_id = i.id) >= {_SIGHTINGS} "
                       f"LIMIT 200")
    having = [r["id"] for r in rows
              if colour in colours_in(worn(r["appearance"] or "", part) if part
                                      else r["appearance"] or "")]
    return having[0] if len(rows) > 1 and len(having) == 1 else None
