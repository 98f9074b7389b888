"""The graph tables as networkx graphs: one video's (exports, the panel) or the library's."""

from __future__ import annotations

import json

import networkx as nx
import sqlite_utils

from backend.graph import schema


def has_graph(db: sqlite_utils.Database) -> bool:
    return all(db[name].exists() for name in schema.GRAPH_TABLES)


def to_networkx(db: sqlite_utils.Database, prefix: str = "") -> nx.MultiDiGraph:
    """Every node and edge with its columns as attributes (segments decoded to a list); edge
    keys are the edge ids. `prefix` (a video id and '/') keeps ids apart across videos."""
    graph = nx.MultiDiGraph()
    if not has_graph(db):
        return graph
    for row in db["graph_nodes"].rows:
        graph.add_node(prefix + row["id"], **_attributes(row, "id"))
    for row in db["graph_edges"].rows:
        graph.add_edge(prefix + row["source"], prefix + row["target"], key=row["id"],
                       **_attributes(row, "source", "target"))
    return graph


def library_graph(databases: dict[str, sqlite_utils.Database]) -> nx.MultiDiGraph:
    """One graph over many videos ({video id: its database}); every node carries its video."""
    graph = nx.MultiDiGraph()
    for video_id, db in databases.items():
        part = to_networkx(db, prefix=f"{video_id}/")
        nx.set_node_attributes(part, video_id, "video_id")
        graph.update(part)
    return graph


def _attributes(row: dict, *skip: str) -> dict:
    out = {k: v for k, v in row.items() if k not in skip}
    out["segments"] = json.loads(out.get("segments") or "[]")
    return out


def answer_subgraph(db: sqlite_utils.Database, seeds: list[str], instance_ids: list[int],
                    times: list[float], limit: int = 60) -> nx.MultiDiGraph:
    """The part of a video's graph an answer used: the question's seeded nodes and the objects
    the answer names, with the edges between them and their neighbours that hold at the answer's
    times (all times when it has none), at most `limit` nodes, the seeds kept first."""
    whole = to_networkx(db)
    core = [n for n in dict.fromkeys([*seeds, *(f"object:{i}" for i in instance_ids)]) if n in whole]

    def holds(data: dict) -> bool:
        return not times or any(data["t_start"] - 1.0 <= t <= data["t_end"] + 1.0 for t in times)

    kept = list(core)
    for node in core:
        neighbours = [(v, data) for _, v, data in whole.out_edges(node, data=True)]
        neighbours += [(u, data) for u, _, data in whole.in_edges(node, data=True)]
        for other, data in neighbours:
            if other not in kept and holds(data) and len(kept) < limit:
                kept.append(other)
    return whole.subgraph(kept).copy()
