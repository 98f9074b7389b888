"""The memory inspector: long-term memories, the knowledge graph of a video or of the library,
and the video's SQL tables as read-only tables."""

from __future__ import annotations

import json
from contextlib import ExitStack

import networkx as nx
import plotly.graph_objects as go

from app import graph_figure
from app.api import memory_store
from app.views import clock
from backend.config import Settings
from backend.errors import InputError
from backend.exports import read_only
from backend.graph.network import has_graph, library_graph, to_networkx
from backend.graph.schema import NODE_KINDS, RELATIONS
from backend.library import Library
from backend.memory import parametric
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
    if kind == "semantic":
        note += f". Parametric memory: {parametric.described(settings, scope)}"
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


GRAPH_SCOPES = ("This video", "Whole library")
ANY = "any"
GRAPH_RELATIONS = (ANY, *RELATIONS)
GRAPH_KINDS = (ANY, *NODE_KINDS)
EDGE_ROWS = 2000  # a library's edges run to thousands; the figure and filters narrow them


def graph(settings: Settings, video_id: str | None, scope: str, relation: str = ANY,
          kind: str = ANY) -> tuple[go.Figure, dict, str]:
    """(figure, edge table, note) for the selected video's knowledge graph or the library's,
    narrowed to the edges of `relation` that touch a node of `kind` when those are not ANY."""
    library = Library(settings.home)
    whole_library = scope == GRAPH_SCOPES[1]
    if whole_library:
        entries = library.list()
    elif video_id:
        entries = [library.get(video_id)]
    else:
        raise InputError("Pick a video first, or choose the whole library.")
    with ExitStack() as stack:
        dbs = {e.video_id: stack.enter_context(read_only(e)) for e in entries}
        missing = [e.name for e in entries if not has_graph(dbs[e.video_id])]
        whole = library_graph(dbs) if whole_library else to_networkx(dbs[entries[0].video_id])
    names = {e.video_id: e.name for e in entries} if whole_library else None
    shown = filtered(whole, relation, kind)
    subject = f"the library ({len(entries)} videos)" if whole_library else entries[0].name
    if whole.number_of_nodes() == 0:
        empty = "No video in the library has a knowledge graph yet." if whole_library else \
            "This video has no knowledge graph yet: showing it in the library builds one."
    else:
        empty = f"No relation is {relation} with a node of kind {kind}."
    fig = graph_figure.graph_figure(shown, title=f"The knowledge graph of {subject}",
                                    empty=empty, video_names=names)
    table = edge_table(shown, names)
    note = f"{shown.number_of_nodes()} nodes and {shown.number_of_edges()} relations"
    if shown is not whole:
        note += (f" (of {whole.number_of_nodes()} and {whole.number_of_edges()}: relation "
                 f"{relation}, kind {kind})")
    if len(table["data"]) < shown.number_of_edges():
        note += f"; the table lists the first {len(table['data'])}"
    if whole_library and missing:
        note += (f". {len(missing)} of the {len(entries)} videos have no graph yet (ingested "
                 "before graphs existed; showing one in the library builds it)")
    return fig, table, note + "."


def filtered(graph: nx.MultiDiGraph, relation: str, kind: str) -> nx.MultiDiGraph:
    """The edges of `relation` touching a node of `kind`, with their ends (and, filtering by
    kind alone, every node of that kind); `graph` itself when both are ANY."""
    if relation == ANY and kind == ANY:
        return graph
    kind_of = nx.get_node_attributes(graph, "kind")
    edges = [(u, v, k, data) for u, v, k, data in graph.edges(keys=True, data=True)
             if relation in (ANY, data.get("relation")) and kind in (ANY, kind_of.get(u), kind_of.get(v))]
    nodes = {n for u, v, *_ in edges for n in (u, v)}
    if relation == ANY:
        nodes |= {n for n, k in kind_of.items() if k == kind}
    out = nx.MultiDiGraph()
    out.add_nodes_from((n, graph.nodes[n]) for n in graph if n in nodes)
    out.add_edges_from(edges)
    return out


def edge_table(graph: nx.MultiDiGraph, video_names: dict[str, str] | None = None) -> dict:
    """One row per relation, in time order, led by its edge id (what an edit names); a video
    column for the library's graph."""
    def name(node: str) -> str:
        return graph.nodes[node].get("name") or node

    edges = sorted(graph.edges(keys=True, data=True), key=lambda e: (
        graph.nodes[e[0]].get("video_id") or "", e[3].get("t_start") or 0.0,
        e[3].get("relation") or "", e[0], e[1]))[:EDGE_ROWS]
    headers = ["id", "relation", "from", "to", "times", "confidence", "origin", "memory entry"]
    rows = [[edge_id, data.get("relation"), name(u), name(v), graph_figure.span(data),
             data.get("confidence"), *origin_parts(data.get("origin"))]
            for u, v, edge_id, data in edges]
    if video_names is not None:
        headers.append("video")
        for row, (u, *_) in zip(rows, edges):
            video = graph.nodes[u].get("video_id")
            row.append(video_names.get(video, video))
    return {"headers": headers, "data": rows}


def origin_parts(origin: str | None) -> tuple[str, str]:
    """(origin, memory entry): ('answer', its semantic memory id) for what a checked answer
    added, so a person can find that answer under Semantic memory; else (origin, '')."""
    source, _, entry = (origin or "").partition(":")
    return (source, entry) if source == "answer" else (origin or "", "")


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
