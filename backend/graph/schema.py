"""The graph's two tables, beside the other tables of a video (see backend/schema.py)."""

from __future__ import annotations

import sqlite_utils

GRAPH_TABLES = ("graph_nodes", "graph_edges")

NODE_KINDS = ("object", "kind", "speaker", "topic", "text", "shot", "place", "fact", "entity")
RELATIONS = ("is-a", "appears-with", "near", "enters-after", "leaves-before", "in-shot",
             "in-place", "says", "shows-text", "answered")

GRAPH_DOC = """\
graph_nodes(id TEXT, kind TEXT, name TEXT, t_start REAL, t_end REAL, segments TEXT, detail TEXT)
  -- the knowledge graph's entities. kind is 'object' (id 'object:<instances.id>', name e.g.
  -- 'car 3'), 'kind' ('kind:car': what the objects are), 'speaker' ('speaker:1', whoever
  -- speaks), 'topic' ('topic:<word>', a word the speech dwells on), 'text' ('text:<words>', a
  -- line read on screen), 'shot' ('shot:<shots.id>'), 'place' ('place:middle left', a third of
  -- the picture across and down) or 'fact' ('fact:<memory entry id>', name = a checked answer,
  -- detail holds its question) or 'entity' (a thing an LLM read in speech or a model's
  -- captions, MEMORYREEL_GRAPH_TRIPLES); t_start/t_end the span it is seen or heard; segments a JSON
  -- list of the scenes ids (fine time steps) that support it; detail JSON with more facts.
graph_edges(id INTEGER, source TEXT, target TEXT, relation TEXT, t_start REAL, t_end REAL,
            segments TEXT, confidence REAL, origin TEXT)
  -- relations between graph_nodes ids: 'is-a' (object -> kind), 'appears-with' (objects in
  -- view together), 'near' (objects within about a body height of each other), 'enters-after'
  -- and 'leaves-before' (from each object to the next one to arrive or leave), 'in-shot',
  -- 'in-place' (where an object spends a quarter or more of its time), 'says' (speaker ->
  -- topic), 'shows-text' (shot -> text), 'answered' (what a checked answer was about -> its
  -- fact). t_start/t_end the span the relation holds; segments the scenes ids that support it;
  -- confidence 0-1; origin 'tables' (built by code at ingest), 'llm' (a triple read from
  -- speech or captions, its relation the model's words) or 'answer:<memory entry id>'.
"""


def create(db: sqlite_utils.Database) -> None:
    db["graph_nodes"].create({
        "id": str, "kind": str, "name": str, "t_start": float, "t_end": float, "segments": str,
        "detail": str,
    }, pk="id", replace=True)
    db["graph_edges"].create({
        "id": int, "source": str, "target": str, "relation": str, "t_start": float,
        "t_end": float, "segments": str, "confidence": float, "origin": str,
    }, pk="id", replace=True)
    db["graph_edges"].create_index(["source"], if_not_exists=True)
    db["graph_edges"].create_index(["target"], if_not_exists=True)
