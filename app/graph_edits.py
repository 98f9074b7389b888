"""A person's edits to one video's knowledge graph (delete an edge, correct its relation or
confidence) and the list of changes to it, for the Memory inspector.

The one place the app writes to a video.db. Every write goes through backend/graph/facts.py,
which opens and closes the database for each edit and logs it in `graph_history`, so that later
answers and rebuilds respect it; here the edit is checked and put into words.
"""

from __future__ import annotations

import json

from app.inspector import GRAPH_SCOPES, origin_parts
from backend.config import Settings
from backend.errors import InputError
from backend.exports import read_only
from backend.graph import facts
from backend.library import Library, VideoEntry

PER_VIDEO = ("Edits and changes belong to one video's graph: choose “This video” above to edit "
             "the selected video's graph and see its changes.")
CHANGE_COLUMNS = ["at", "action", "edge", "before", "after", "by", "memory entry"]
_NAME = 60  # characters of a node's name in a message: a fact node is named by its whole answer


def delete(settings: Settings, video_id: str | None, scope: str, edge_id: float | None) -> str:
    entry, number = _video(settings, video_id, scope), _edge_id(edge_id)
    said = _described(entry, number)
    _apply(facts.delete, entry, number)
    return (f"Deleted edge {number} ({said}); later answers and rebuilds will not bring it "
            "back.")


def correct(settings: Settings, video_id: str | None, scope: str, edge_id: float | None,
            relation: str | None = None, confidence: float | None = None) -> str:
    entry, number = _video(settings, video_id, scope), _edge_id(edge_id)
    change = {k: v for k, v in (("relation", relation or None),
                                ("confidence", None if confidence is None else float(confidence)))
              if v is not None}
    if not change:
        raise InputError("Choose a new relation or type a new confidence (0 to 1) first.")
    said = _described(entry, number)
    _apply(facts.correct, entry, number, **change)
    return (f"Corrected edge {number} ({said}): {_change(change)}; later answers and rebuilds "
            "keep the correction.")


def changes(settings: Settings, video_id: str | None, scope: str) -> tuple[dict, str]:
    """(table, note): every change to the video's graph since ingest, newest first."""
    if scope == GRAPH_SCOPES[1]:
        return {"headers": CHANGE_COLUMNS, "data": []}, PER_VIDEO
    entry = _video(settings, video_id, scope)
    with read_only(entry) as db:
        rows = facts.history(db)[::-1]
    data = [[r["at"], r["action"], r["edge_key"].replace("|", " · "), r["before"],
             _after(r["action"], r["after"]), *origin_parts(r["origin"])] for r in rows]
    note = (f"{len(rows)} changes to the graph of {entry.name}, newest first." if rows else
            f"No changes to the graph of {entry.name} since ingest.")
    return {"headers": CHANGE_COLUMNS, "data": data}, note


def _video(settings: Settings, video_id: str | None, scope: str) -> VideoEntry:
    if scope == GRAPH_SCOPES[1]:
        raise InputError(PER_VIDEO)
    if not video_id:
        raise InputError("Pick a video first: an edit changes one video's graph.")
    return Library(settings.home).get(video_id)


def _edge_id(value: float | str | None) -> int:
    """An edge id as typed: a whole number within SQLite's integers, or a message saying so (3.7
    is no edge, and 1e30 no row SQLite can hold)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError("Type an edge id first: the id column of the edge table (clicking a "
                         "row fills it in).")
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not number.is_integer() or not 1 <= number <= _LARGEST_ID:
        raise InputError(f"An edge id is a whole number from the id column of the edge table, "
                         f"not {value!r}.")
    return int(number)


_LARGEST_ID = 2**63 - 1  # SQLite's largest integer


def _described(entry: VideoEntry, edge_id: int) -> str:
    """'car 3 near person 2': the edge as it is before the edit."""
    with read_only(entry) as db:
        row = None if not db["graph_edges"].exists() else next(db.query(
            "SELECT e.relation, coalesce(a.name, e.source) AS source, "
            "coalesce(b.name, e.target) AS target FROM graph_edges e "
            "LEFT JOIN graph_nodes a ON a.id = e.source "
            "LEFT JOIN graph_nodes b ON b.id = e.target WHERE e.id = ?", [edge_id]), None)
    if row is None:
        raise InputError(_unknown(entry, edge_id))
    return f"{_short(row['source'])} {row['relation']} {_short(row['target'])}"


def _apply(edit, entry: VideoEntry, edge_id: int, **change) -> None:
    try:
        edit(entry.db_path, edge_id, **change)
    except LookupError as e:  # another tab deleted it after it was read
        raise InputError(_unknown(entry, edge_id)) from e
    except ValueError as e:
        raise InputError(f"Cannot correct edge {edge_id}: {e}.") from e


def _unknown(entry: VideoEntry, edge_id: int) -> str:
    return (f"The graph of {entry.name} has no edge {edge_id}: pick an id from the edge table "
            "(Show refreshes it).")


def _after(action: str, after: str) -> str:
    return _change(json.loads(after)) if action == "corrected" else after


def _change(change: dict) -> str:
    return ", ".join(f"{k} now {v:g}" if isinstance(v, float) else f"{k} now {v}"
                     for k, v in change.items())


def _short(name: str) -> str:
    return name if len(name) <= _NAME else name[: _NAME - 1] + "…"
