"""Triples an LLM reads from what the tables do not already structure: what is said (speech) and
what a captioning model wrote. Off by default (`MEMORYREEL_GRAPH_TRIPLES`): descriptions that the
offline captioner writes come from the tables, so triples from them would restate the graph.

Lines are sent in batches, each numbered, under a JSON grammar; every triple names the line it
came from, which gives its time and segments. Subjects and objects merge into the graph's nodes
by embedding similarity (WorldMM's consolidation threshold, cosine >= 0.6, without its extra
LLM call: a 1.5B model's merge decision is not worth a second call per triple); an entity with no
close node becomes an `entity` node. The same triple read from several lines is one edge spanning
them all, and a person's deletions and corrections hold (`facts.respect_edits`).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Callable

import numpy as np
import sqlite_utils
from pydantic import BaseModel, Field

from backend.graph import facts
from models.keywords import keywords
from models.llm import ChatModel, LLMError

log = logging.getLogger(__name__)

MERGE_SIMILARITY = 0.6
BATCH_CHARS = 700
_SYSTEM = """You extract facts from lines of a video's transcript and captions as short triples.
Each triple: {"line": the line's number, "subject": a person or thing, "relation": a verb or
short verb phrase, "object": a person, thing or place}. Only facts the line states; at most 8.
Reply as JSON: {"triples": [...]}."""


class Triple(BaseModel):
    line: int
    subject: str = Field(max_length=40)
    relation: str = Field(max_length=30)
    object: str = Field(max_length=40)


class Triples(BaseModel):
    triples: list[Triple] = Field(max_length=8)


def lines(db: sqlite_utils.Database) -> list[tuple[float, float, str]]:
    """What the tables hold as free text only: speech, and captions a model wrote."""
    out = [(r["t_start"], r["t_end"], r["text"].strip())
           for r in db.query("SELECT t_start, t_end, text FROM speech ORDER BY t_start")
           if (r["text"] or "").strip()]
    out += [(r["t_start"], r["t_end"], r["description"].strip())
            for r in db.query("SELECT t_start, t_end, description, source FROM timeline "
                              "ORDER BY t_start")
            if r["source"] not in ("evidence", "", None) and (r["description"] or "").strip()]
    return sorted(out)


def add(db: sqlite_utils.Database, llm: ChatModel,
        embed: Callable[[list[str]], np.ndarray]) -> dict[str, int]:
    """Extract, merge and write; returns counts of calls, triples read and edges added."""
    text = lines(db)
    nodes = {r["id"]: r for r in db.query("SELECT id, name FROM graph_nodes WHERE kind != 'fact'")}
    ids = list(nodes)
    vectors = embed([nodes[i]["name"] for i in ids]) if ids else np.zeros((0, 1))
    found: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    new_nodes: dict[str, str] = {}
    calls = read = 0
    for batch in _batches(text):
        numbered = "\n".join(f"{k}. {line}" for k, (_, _, line) in enumerate(batch, start=1))
        calls += 1
        try:
            reply = llm.complete([{"role": "system", "content": _SYSTEM},
                                  {"role": "user", "content": numbered}],
                                 response_model=Triples, max_tokens=400).parsed
        except LLMError as e:
            log.warning("triples: a batch failed and was skipped: %s", e)
            continue
        for triple in reply.triples:
            if not 1 <= triple.line <= len(batch):
                continue
            read += 1
            if not all(keywords(name) for name in (triple.subject, triple.object)):
                continue  # 'is', 'the', 'you': a small model's split of a sentence, not an entity
            ends = [_node(name, ids, vectors, embed, new_nodes) for name in (triple.subject, triple.object)]
            relation = re.sub(r"[^a-z]+", "-", triple.relation.lower()).strip("-")
            if relation and ends[0] != ends[1]:
                t0, t1, _ = batch[triple.line - 1]
                found.setdefault((ends[0], relation, ends[1]), []).append((t0, t1))
    added = _write(db, found, new_nodes)
    return {"calls": calls, "triples": read, "edges": added, "entities": len(new_nodes)}


def _batches(text: list[tuple[float, float, str]]) -> list[list[tuple[float, float, str]]]:
    batches, current = [], []
    for item in text:
        if current and sum(len(t) for *_, t in current) + len(item[2]) > BATCH_CHARS:
            batches.append(current)
            current = []
        current.append(item)
    return batches + ([current] if current else [])


def _node(name: str, ids: list[str], vectors: np.ndarray, embed, new_nodes: dict[str, str]) -> str:
    if ids:
        similarity = vectors @ embed([name])[0]
        best = int(np.argmax(similarity))
        if similarity[best] >= MERGE_SIMILARITY:
            return ids[best]
    node_id = "entity:" + " ".join(name.lower().split())
    new_nodes[node_id] = name.strip()
    return node_id


def _write(db: sqlite_utils.Database, found: dict, new_nodes: dict[str, str]) -> int:
    def support(spans: list[tuple[float, float]]) -> str:
        return json.dumps(facts.segments_over(db, spans))

    spans_of = {}
    for (source, _, target), spans in found.items():
        for end in (source, target):
            spans_of.setdefault(end, []).extend(spans)
    edges = [{"source": s, "target": t, "relation": r, "t_start": min(a for a, _ in spans),
              "t_end": max(b for _, b in spans), "segments": support(spans),
              "confidence": 0.5, "origin": "llm"} for (s, r, t), spans in found.items()]
    edges = facts.respect_edits(db, edges)
    with db.conn:
        db["graph_nodes"].upsert_all(
            [{"id": node_id, "kind": "entity", "name": name,
              "t_start": min(a for a, _ in spans_of.get(node_id, [(0.0, 0.0)])),
              "t_end": max(b for _, b in spans_of.get(node_id, [(0.0, 0.0)])),
              "segments": support(spans_of.get(node_id, [])), "detail": None}
             for node_id, name in new_nodes.items()], pk="id")
        start = facts.next_edge_id(db)
        db["graph_edges"].insert_all({"id": start + k, **edge} for k, edge in enumerate(edges))
    return len(edges)
