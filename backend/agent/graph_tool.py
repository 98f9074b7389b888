"""The knowledge graph as a tool for the planner and as one more memory for Recall.

A question's entities (kinds, 'car 3', spoken words, on-screen text, places) seed a personalised
PageRank over the video's graph (backend/graph/ppr.py); the segments it settles in come back
with their times and the relations there that touch the seeds, so an answer can cite both.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import sqlite_utils

from backend.agent.tools import Observation, ToolContext
from backend.graph.ppr import GraphIndex, Hit
from backend.memory_records import MemoryEntry


@lru_cache(maxsize=8)
def _index(db_path: str, modified: float, embed) -> GraphIndex:
    # Keyed by the file's mtime: a re-ingest under the same path gets a fresh index.
    db = sqlite_utils.Database(db_path)
    try:
        return GraphIndex(db, embed)
    finally:
        db.close()


def index(ctx: ToolContext) -> GraphIndex:
    path = Path(ctx.db_path)
    return _index(str(path), path.stat().st_mtime, ctx.embed)


def search(text: str, ctx: ToolContext, k: int = 3) -> list[Hit]:
    return index(ctx).search(text, k)


# What a fact is most about, when a question names several things: the object, then what is
# said or shown, then the kind, the place, the speaker.
_ABOUT = ("object", "text", "topic", "kind", "place", "speaker")


def about(question: str, ctx: ToolContext) -> str | None:
    """The graph node a question is most about (its strongest seed), or None."""
    graph = index(ctx)
    seeds = graph.seeds(question)
    ranked = sorted(seeds, key=lambda n: (-seeds[n], _ABOUT.index(graph.nodes[n]["kind"])
                                          if graph.nodes[n]["kind"] in _ABOUT else len(_ABOUT), n))
    return ranked[0] if ranked else None


def said(hit: Hit) -> str:
    """'[12-14 s] car 3, person 2: car 3 near person 2 (12.4-13.6 s); ...'."""
    relations = "; ".join(hit.relations)
    return (f"[{hit.t_start:.0f}-{hit.t_end:.0f} s] {', '.join(hit.entities) or 'nearby'}"
            + (f": {relations}" if relations else ""))


def memories(text: str, ctx: ToolContext, k: int = 2) -> list[MemoryEntry]:
    """Graph hits as Recall's memories."""
    return [MemoryEntry(id=f"graph:{ctx.video_id}:{hit.segment}", kind="graph", text=said(hit),
                        times=[hit.t_start, hit.t_end], video_id=ctx.video_id)
            for hit in search(text, ctx, k)]


@dataclass
class GraphTool:
    name: str = "Graph"
    description: str = ("find the moments where the things, words, texts or places you name meet "
                        "in the video's knowledge graph, with who appears with or near whom, who "
                        "came or left next, what is said and shown there; input: the names")
    k: int = 3

    def run(self, tool_input: str, ctx: ToolContext) -> Observation:
        hits = search(tool_input, ctx, self.k)
        if not hits:
            return Observation(text="(the graph holds nothing the input names)", ok=False)
        text = "\n".join(said(hit) for hit in hits)
        ids = [i for hit in hits for i in hit.instance_ids]
        return Observation(text=text, times=[hit.t_start for hit in hits],
                           instance_ids=list(dict.fromkeys(ids)))
