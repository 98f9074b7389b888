"""Long-term memory on disk: semantic and procedural entries in LanceDB, replay counts in SQLite.

    <memory_path>/memory.lance/semantic     validated QA summaries, one video each (intra-video)
    <memory_path>/memory.lance/procedural   tool workflows of successful answers (inter-task)
    <memory_path>/memory.lance/patterns     one decision pattern per task type
    <memory_path>/replays.db                how often every entry was replayed, episodic included

With MEMORYREEL_MEMORY_URI the three tables live there instead (s3://, gs://, az://, file://
or another folder, as lancedb.connect takes it), so that app replicas on several machines share
them; replay counts and sessions stay in the memory folder.

Replay counts live in SQLite, not in the vector rows: an increment is one atomic UPDATE that
parallel questions cannot lose, where a LanceDB update rewrites data files.
Entries are found by the similarity of their question to a new one (vectors are question
embeddings); a pattern is found by its task type.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import replace
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Callable
from urllib.parse import unquote, urlsplit

import lancedb
import numpy as np
import pyarrow as pa
import sqlite_utils

from backend import episodic
from backend.config import Settings
from backend.errors import InputError, NotFoundError
from backend.factory import embedder_for
from backend.library import Library
from backend.memory import vectors
from backend.memory_records import MemoryEntry, ReplayCount

KINDS = ("semantic", "procedural", "pattern", "episodic")
_TABLES = {"semantic": "semantic", "procedural": "procedural", "pattern": "patterns"}
# One writer at a time per memory folder inside a process; LanceDB handles other processes.
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _schema(kind: str, dim: int) -> pa.Schema:
    common = [pa.field("id", pa.string()), pa.field("video_id", pa.string()),
              pa.field("question", pa.string()), pa.field("text", pa.string()),
              pa.field("created_at", pa.string()), pa.field("updated_at", pa.string())]
    extra = {
        "semantic": [pa.field("answer", pa.string()), pa.field("times", pa.list_(pa.float64())),
                     pa.field("verdict", pa.string()), pa.field("support", pa.int64()),
                     *_ADDED["semantic"]],
        "procedural": [pa.field("answer", pa.string()), pa.field("task_type", pa.string()),
                       pa.field("workflow", pa.string())],
        "pattern": [pa.field("task_type", pa.string()), pa.field("n_workflows", pa.int64())],
    }[kind]
    return pa.schema(common + extra + [pa.field("vector", pa.list_(pa.float32(), dim))])


# Columns added after memory folders were first written: a table without them gains them, empty,
# the first time it is written to (reading never changes a folder).
# semantic.asked: the time, quoted words and ids the question named (JSON, reuse.Asked);
# semantic.query: the typed query that computed the answer, with its value (JSON), or ''.
_ADDED = {"semantic": [pa.field("asked", pa.string()), pa.field("query", pa.string())]}


def episodic_id(video_id: str, scale: str, t_start: float) -> str:
    return f"episodic:{video_id}:{scale}:{t_start:g}"


class MemoryStore:
    """Semantic, procedural and pattern entries of one memory folder, and all replay counts."""

    def __init__(self, settings: Settings, embed: Callable[[list[str]], np.ndarray] | None = None):
        self.settings = settings
        self.path = settings.memory_path
        self._uri = settings.memory_uri or str(self.path / "memory.lance")
        # None in an object store, where nothing exists before a table is written.
        self._folder = _local_folder(self._uri)
        self._embed = embed
        key = self._uri if self._folder is None else str(self._folder.resolve())
        with _LOCKS_GUARD:
            self._lock = _LOCKS.setdefault(key, threading.Lock())

    # --- storage -------------------------------------------------------------------------

    @cached_property
    def _db(self):
        if self._folder is not None:
            self._folder.parent.mkdir(parents=True, exist_ok=True)
        return lancedb.connect(self._uri)

    def _replays(self) -> sqlite_utils.Database:
        self.path.mkdir(parents=True, exist_ok=True)
        db = sqlite_utils.Database(self.path / "replays.db")
        db.conn.execute("PRAGMA busy_timeout = 10000")
        db.execute("CREATE TABLE IF NOT EXISTS replays (id TEXT PRIMARY KEY, kind TEXT, "
                   "video_id TEXT, text TEXT, replays INTEGER NOT NULL DEFAULT 0, last_replayed TEXT)")
        return db

    def _table(self, kind: str, create_dim: int | None = None):
        name = _TABLES[kind]
        if create_dim is None and self._folder is not None and not self._folder.is_dir():
            return None  # nothing stored yet; reading must not create the folder
        try:
            table = self._db.open_table(name)
        except ValueError:  # not among the connection's tables: no entry of this kind yet
            if create_dim is None:
                return None
            return self._db.create_table(name, schema=_schema(kind, create_dim), exist_ok=True)
        if create_dim is not None:
            _add_missing_columns(table, kind)
        return table

    def embed(self, texts: list[str]) -> np.ndarray:
        if self._embed is None:  # built on first use: listing and deleting need no model
            self._embed = embedder_for(self.settings).embed
        return self._embed(texts)

    # --- writing -------------------------------------------------------------------------

    def add(self, kind: str, row: dict, vector: np.ndarray) -> str:
        """Store one semantic, procedural or pattern row; returns its id."""
        row = {"id": row.get("id") or f"{kind[:3]}-{uuid.uuid4().hex[:12]}", "video_id": "",
               "question": "", "created_at": _now(), "updated_at": _now(), **row,
               "vector": vector.astype(np.float32)}
        with self._lock:
            table = self._table(kind, create_dim=len(vector))
            table.add([row])
            vectors.ensure_index(table, self.settings.vector_index_rows)
        return row["id"]

    def update(self, kind: str, entry_id: str, values: dict) -> None:
        # LanceDB cannot write an empty list as a value ("concat requires input of at least
        # one array"): an answer with no times lost its fact's update. Those go as SQL.
        empty = [k for k, v in values.items() if isinstance(v, list) and not v]
        with self._lock:
            table = self._table(kind)
            _add_missing_columns(table, kind)
            table.update(where=_id_filter(entry_id),
                         values={**{k: v for k, v in values.items() if k not in empty},
                                 "updated_at": _now()})
            if empty:
                table.update(where=_id_filter(entry_id),
                             values_sql={k: "make_array()" for k in empty})

    def upsert_pattern(self, task_type: str, text: str, n_workflows: int) -> str:
        entry_id = f"pattern-{task_type}"
        vector = self.embed([text])[0]
        with self._lock:
            table = self._table("pattern", create_dim=len(vector))
            old = table.search().where(_id_filter(entry_id)).limit(1).to_list()
            created = old[0]["created_at"] if old else _now()
            table.delete(_id_filter(entry_id))
            table.add([{"id": entry_id, "video_id": "", "question": f"{task_type} questions",
                        "text": text, "task_type": task_type, "n_workflows": n_workflows,
                        "created_at": created, "updated_at": _now(),
                        "vector": vector.astype(np.float32)}])
        return entry_id

    def count_replays(self, entries: list) -> None:
        """One more replay for each entry (anything with id, kind, video_id and text: a
        MemoryEntry, a replayed one)."""
        if not entries:
            return
        db = self._replays()
        try:
            with db.conn:
                for e in entries:
                    db.execute("INSERT INTO replays (id, kind, video_id, text, replays, last_replayed) "
                               "VALUES (?, ?, ?, ?, 1, ?) ON CONFLICT(id) DO UPDATE SET "
                               "replays = replays + 1, last_replayed = excluded.last_replayed, "
                               "text = excluded.text",
                               [e.id, e.kind, e.video_id, e.text[:500], _now()])
        finally:
            db.close()

    def delete(self, entry_id: str) -> None:
        entry = self.get(entry_id)
        if entry.kind == "episodic":
            raise InputError("Episodic memory is part of a video's ingest; delete the video instead.")
        with self._lock:
            self._table(entry.kind).delete(_id_filter(entry_id))
        self._drop_counts("id = ?", [entry_id])

    def forget_video(self, video_id: str) -> int:
        """Drop a video's semantic entries and replay counts; procedural memory stays."""
        removed = 0
        table = self._table("semantic")
        if table is not None:
            where = f"video_id = '{_quote(video_id)}'"
            with self._lock:
                removed = table.count_rows(where)
                table.delete(where)
        self._drop_counts("video_id = ? AND kind IN ('semantic', 'episodic')", [video_id])
        return removed

    def _drop_counts(self, where: str, params: list) -> None:
        db = self._replays()
        try:
            with db.conn:
                db.execute(f"DELETE FROM replays WHERE {where}", params)
        finally:
            db.close()

    # --- reading -------------------------------------------------------------------------

    def search(self, text: str | None = None, kind: str | None = None, video_id: str | None = None,
               k: int = 10, min_similarity: float | None = None,
               vector: np.ndarray | None = None, scale: str | None = None) -> list[MemoryEntry]:
        """Entries whose question is most similar to `text` (or `vector`), best first.

        scale: for episodic memory, search one temporal scale only."""
        if vector is None:
            vector = self.embed([text])[0]
        kinds = [kind] if kind else ["semantic", "procedural", "pattern"]
        hits = []
        for name in kinds:
            if name == "episodic":
                hits += self._episodic_hits(vector, video_id, k, scale)
                continue
            table = self._table(name)
            if table is None:
                continue
            where = f"video_id = '{_quote(video_id)}'" if video_id and name == "semantic" else None
            hits += [self._public(name, row) for row in
                     vectors.search(table, vector, k, where=where, min_similarity=min_similarity)]
        hits.sort(key=lambda h: -h.similarity)
        return self._with_counts(hits[:k])

    def pattern(self, task_type: str) -> MemoryEntry | None:
        table = self._table("pattern")
        if table is None:
            return None
        rows = table.search().where(f"task_type = '{_quote(task_type)}'").limit(1).to_list()
        return self._with_counts([self._public("pattern", rows[0])])[0] if rows else None

    def list(self, kind: str | None = None, video_id: str | None = None) -> list[MemoryEntry]:
        if kind and kind not in KINDS:
            raise InputError(f"Unknown memory type '{kind}': choose one of {', '.join(KINDS)}.")
        entries = []
        for name in [kind] if kind else ["semantic", "procedural", "pattern"]:
            if name == "episodic":
                if not video_id:
                    raise InputError("Listing episodic memory needs a video id (--video).")
                entries += self._episodic_rows(video_id)
                continue
            table = self._table(name)
            if table is None:
                continue
            rows = table.to_arrow().drop_columns(["vector"]).to_pylist()
            entries += [self._public(name, r) for r in rows
                        if not video_id or name != "semantic" or r["video_id"] == video_id]
        entries.sort(key=lambda e: e.created_at or "")
        return self._with_counts(entries)

    def get(self, entry_id: str) -> MemoryEntry:
        if entry_id.startswith("episodic:"):
            video_id = _episodic_video_id(entry_id)
            found = [e for e in self._episodic_rows(video_id) if e.id == entry_id]
        else:
            found = []
            for name in ("semantic", "procedural", "pattern"):
                table = self._table(name)
                if table is not None:
                    rows = table.search().where(_id_filter(entry_id)).limit(1).to_list()
                    found += [self._public(name, r) for r in rows]
        if not found:
            raise NotFoundError(f"No memory entry '{entry_id}'. List entries with "
                                "`python -m backend memory list`.")
        return self._with_counts(found)[0]

    def count(self, kind: str, task_type: str | None = None) -> int:
        table = self._table(kind)
        if table is None:
            return 0
        return table.count_rows(f"task_type = '{_quote(task_type)}'" if task_type else None)

    def replay_counts(self) -> list[ReplayCount]:
        db = self._replays()
        try:
            return [ReplayCount(**r) for r in db.query(
                "SELECT id, kind, video_id, text, replays, last_replayed FROM replays "
                "ORDER BY replays DESC, last_replayed DESC")]
        finally:
            db.close()

    def _with_counts(self, entries: list[MemoryEntry]) -> list[MemoryEntry]:
        if not entries:
            return entries
        # Only these entries' counts: this runs on every search, the table grows with every replay.
        ids = [e.id for e in entries]
        if not (self.path / "replays.db").is_file():  # nothing replayed yet: create nothing
            return [replace(e, replays=0) for e in entries]
        db = self._replays()
        try:
            counts = {r["id"]: r["replays"] for r in db.query(
                f"SELECT id, replays FROM replays WHERE id IN ({', '.join('?' * len(ids))})", ids)}
        finally:
            db.close()
        return [replace(e, replays=counts.get(e.id, 0)) for e in entries]

    @staticmethod
    def _public(kind: str, row: dict) -> MemoryEntry:
        row = {k: v for k, v in row.items() if k not in ("vector", "_distance")}
        if "workflow" in row:
            row["workflow"] = json.loads(row["workflow"] or "[]")
        added = dict.fromkeys((f.name for f in _ADDED.get(kind, [])), "")  # rows older than them
        return MemoryEntry(kind=kind, **{**added, **row})

    def _episodic_rows(self, video_id: str) -> list[MemoryEntry]:
        folder = Library(self.settings.home).get(video_id).folder
        rows = episodic.rows(folder)
        return [self._episode(video_id, r) for r in rows]

    def _episodic_hits(self, vector: np.ndarray, video_id: str | None, k: int,
                       scale: str | None) -> list[MemoryEntry]:
        if not video_id:
            raise InputError("Searching episodic memory needs a video id (--video).")
        folder = Library(self.settings.home).get(video_id).folder
        return [self._episode(video_id, h)
                for h in episodic.search(folder, vector, scale=scale, k=k)]

    @staticmethod
    def _episode(video_id: str, row: dict) -> MemoryEntry:
        return MemoryEntry(id=episodic_id(video_id, row["scale"], row["t_start"]), kind="episodic",
                           video_id=video_id, text=row["text"],
                           times=[row["t_start"], row["t_end"]], scale=row["scale"],
                           similarity=row.get("similarity"))


def _episodic_video_id(entry_id: str) -> str:
    """The video id in an episodic entry id (see `episodic_id`), or an InputError saying the form."""
    parts = entry_id.split(":", 3)
    if len(parts) != 4 or not all(parts[1:]):
        raise InputError(f"'{entry_id}' is not an episodic memory id: they look like "
                         "episodic:<video_id>:<scale>:<start seconds>, as `memory list "
                         "--type episodic --video VIDEO_ID` prints them.")
    return parts[1]


def _local_folder(uri: str) -> Path | None:
    """The folder a LanceDB URI names on this machine (a path or file://), else None."""
    scheme, sep, _ = uri.partition("://")
    if not sep:
        return Path(uri)
    return Path(unquote(urlsplit(uri).path)) if scheme.lower() == "file" else None


def _add_missing_columns(table, kind: str) -> None:
    missing = [f.name for f in _ADDED.get(kind, []) if f.name not in table.schema.names]
    if missing:
        table.add_columns({name: "''" for name in missing})


def _quote(value: str) -> str:
    return value.replace("'", "''")


def _id_filter(entry_id: str) -> str:
    return f"id = '{_quote(entry_id)}'"
