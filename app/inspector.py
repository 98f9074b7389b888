"""The memory inspector: long-term memories and the video's SQL tables as read-only tables."""

from __future__ import annotations

import json

from app.api import memory_store
from app.views import clock
from backend.config import Settings
from backend.errors import InputError
from backend.library import Library
from backend.memory_records import MemoryEntry
from backend.sql_runner import run_query

KINDS = {"Semantic": "semantic", "Procedural": "procedural", "Patterns": "pattern",
         "Episodic": "episodic"}
# Per kind, the fields worth a column; the id stays first (selecting a row reads it).
_COLUMNS = {
    "semantic": ["id", "question", "text", "answer", "times", "replays", "created"],
    "procedural": ["id", "question", "task type", "text", "replays", "created"],
    "pattern": ["id", "task type", "text", "replays", "created"],
    "episodic": ["id", "scale", "times", "text", "replays"],
}
_TEXT = 400  # characters of a memory's text in the table; the full entry is one click away


def _row(entry: MemoryEntry, columns: list[str]) -> list:
    times = entry.times or []
    values = {"id": entry.id, "question": entry.question or "",
              "text": _short(entry.text or ""), "answer": _short(entry.answer or ""),
              "task type": entry.task_type or "", "scale": entry.scale or "",
              "times": " – ".join(clock(t) for t in times[:2]) if entry.kind == "episodic"
              else ", ".join(clock(t) for t in times[:6]),
              "replays": entry.replays or 0, "created": (entry.created_at or "")[:19],
              "similarity": round(entry.similarity, 3) if entry.similarity is not None else ""}
    return [values[c] for c in columns]


def _short(text: str) -> str:
    return text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"


def memories(settings: Settings, kind_label: str, video_id: str | None, this_video_only: bool,
             query: str) -> tuple[dict, str]:
    """(table, note) for one kind of memory, searched by meaning when `query` is given."""
    kind = KINDS[kind_label]
    if kind == "episodic" and not video_id:
        raise InputError("Episodic memory belongs to one video: pick a video first.")
    scope = video_id if (this_video_only or kind == "episodic") else None
    store = memory_store(settings)
    if query and query.strip():
        entries = store.search(query.strip(), kind=kind, video_id=scope, k=50)
        note = f"{len(entries)} closest {kind} memories to “{query.strip()}”"
    else:
        entries = store.list(kind=kind, video_id=scope)
        note = f"{len(entries)} {kind} memories"
    if scope and kind in ("semantic", "episodic"):
        note += f" of {Library(settings.home).get(scope).name}"
    columns = _COLUMNS[kind] + (["similarity"] if query and query.strip() else [])
    return {"headers": columns, "data": [_row(e, columns) for e in entries]}, note


def entry_detail(settings: Settings, entry_id: str) -> str:
    entry = memory_store(settings).get(entry_id)
    return f"```json\n{json.dumps(entry.as_dict(), indent=2, default=str)}\n```"


def delete_entry(settings: Settings, entry_id: str) -> str:
    if not entry_id:
        raise InputError("Select a memory in the table first.")
    memory_store(settings).delete(entry_id)
    return f"Deleted memory `{entry_id}`."


def sql(settings: Settings, video_id: str | None, statement: str) -> tuple[dict, str]:
    """Run one read-only SELECT over the video's tables (the agent's own runner and fences)."""
    if not video_id:
        raise InputError("Pick a video first: SQL runs over one video's tables.")
    entry = Library(settings.home).get(video_id)
    result = run_query(entry.db_path, statement, timeout_s=settings.sql_timeout_s,
                       max_rows=settings.sql_max_rows)
    note = f"{len(result.rows)} rows in {result.seconds * 1000:.0f} ms"
    if result.truncated:
        note += f" (first {settings.sql_max_rows}; MEMORYREEL_SQL_MAX_ROWS)"
    return {"headers": result.columns, "data": [list(r) for r in result.rows]}, note
