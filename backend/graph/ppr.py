"""Retrieval by personalised PageRank (WorldMM, HippoRAG): the question's entities seed a random
walk over the graph, and the fine segments where the walk settles are the answer's evidence.

Segments are nodes of the walk, linked to every entity and relation they support, so a segment
where several seeded entities meet outranks one that only a single entity touches, and the
walk reaches segments one relation away (the shot a text was shown in, who arrived next).
Seeds come from the question's words (kinds with their synonyms, topics, texts, places,
'person 3') and, where an embedder is given, from node names close in meaning.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

import networkx as nx
import numpy as np
import sqlite_utils

from backend import kinds
from backend.graph.network import has_graph
from models.keywords import keywords

DAMPING = 0.5          # chance per step of walking on rather than going back to a seed
EMBED_SEEDS = 3        # node names closest in meaning to the question, added as seeds
EMBED_MIN = 0.45       # ... when at least this similar (MiniLM cosine)
MAX_RELATIONS = 6       # per segment, in a hit's words
# The relations a hit tells, most telling first; 'is-a' is already in the object's name.
_TOLD = ("near", "appears-with", "enters-after", "leaves-before", "says", "shows-text",
         "in-place", "in-shot")
# Only names that mean something: 'person 3' and 'person 6' are equally close to any question.
_BY_MEANING = ("kind", "topic", "text", "place")
_PLACE_WORDS = {"lower": "bottom", "upper": "top", "center": "centre"}
_NUMBERED = re.compile(r"(?<=[a-z]) (?:number|no|num) (?=\d)")


@dataclass(frozen=True)
class Hit:
    segment: int                  # scenes.id
    t_start: float
    t_end: float
    score: float
    entities: tuple[str, ...]     # names of the seeded nodes that support the segment
    relations: tuple[str, ...] = ()  # edges there that touch a seeded node, in words
    node_ids: tuple[str, ...] = ()   # graph ids of the seeded nodes that support the segment

    @property
    def instance_ids(self) -> list[int]:
        return [int(n.split(":", 1)[1]) for n in self.node_ids if n.startswith("object:")]


class GraphIndex:
    """One video's graph, ready for questions."""

    def __init__(self, db: sqlite_utils.Database, embed: Callable[[list[str]], np.ndarray] | None = None):
        self.embed = embed
        self.nodes = {r["id"]: r for r in db["graph_nodes"].rows} if has_graph(db) else {}
        self.segments = {r["id"]: (r["t_start"], r["t_end"])
                         for r in db.query("SELECT id, t_start, t_end FROM scenes")}
        self.walk = nx.Graph()
        for node_id, row in self.nodes.items():
            self._support(node_id, row["segments"])
        self.cited: dict[int, list[dict]] = defaultdict(list)  # segment -> edges citing it
        if self.nodes:
            for row in db["graph_edges"].rows:
                for segment in json.loads(row["segments"] or "[]"):
                    self.cited[segment].append(row)
                weight = float(row["confidence"] or 0.0)
                if self.walk.has_edge(row["source"], row["target"]):
                    weight += self.walk[row["source"]][row["target"]]["weight"]
                self.walk.add_edge(row["source"], row["target"], weight=weight)
        self._vectors: np.ndarray | None = None

    def _support(self, node_id: str, segments: str) -> None:
        self.walk.add_node(node_id)
        for segment in json.loads(segments or "[]"):
            self.walk.add_edge(node_id, f"segment:{segment}", weight=1.0)

    def seeds(self, question: str) -> dict[str, float]:
        """Nodes the question names, with weights (1 for a named one, the similarity for one
        found by meaning)."""
        said = " ".join(_PLACE_WORDS.get(w, w) for w in re.findall(r"[a-z0-9]+", question.lower()))
        said = _NUMBERED.sub(" ", said)  # 'car number 3', 'car no 3' -> 'car 3'
        found: dict[str, float] = {}
        for node_id, row in self.nodes.items():
            name = (row["name"] or "").lower()
            if row["kind"] in ("object", "place") and _phrase(name, said):
                found[node_id] = 1.0
                if row["kind"] == "object":  # 'car 3' names that car, not every car
                    said = _phrase_pattern(name).sub(" ", said)
        words = set(keywords(said))
        named = set(kinds.named(said))
        named |= {k for kind in named for k in kinds.detected_as(kind)}
        for node_id, row in self.nodes.items():
            name = (row["name"] or "").lower()
            kind = row["kind"]
            if kind == "kind" and (name in named or name in words):
                found[node_id] = 1.0
            elif kind in ("topic", "speaker") and name in words:
                found[node_id] = 1.0
            elif kind == "text" and (shared := words & (said_there := set(keywords(name)))):
                found[node_id] = len(shared) / len(said_there)
        if self.embed is not None:
            for node_id, similarity in self._by_meaning(question):
                found.setdefault(node_id, similarity)
        return found

    def _by_meaning(self, question: str) -> list[tuple[str, float]]:
        ids = [i for i, row in self.nodes.items() if row["kind"] in _BY_MEANING]
        if not ids:
            return []
        if self._vectors is None:
            self._vectors = self.embed([self.nodes[i]["name"] or "" for i in ids])
        similarity = self._vectors @ self.embed([question])[0]
        best = np.argsort(-similarity)[:EMBED_SEEDS]
        return [(ids[i], float(similarity[i])) for i in best if similarity[i] >= EMBED_MIN]

    def search(self, question: str, k: int = 3) -> list[Hit]:
        """The k segments the walk from the question's seeds settles in most; [] when the
        question names nothing in the graph."""
        seeds = self.seeds(question)
        if not seeds:
            return []
        rank = nx.pagerank(self.walk, alpha=DAMPING, personalization=seeds, weight="weight")
        scored = sorted(((score, node) for node, score in rank.items()
                         if node.startswith("segment:")), reverse=True)[:k]
        hits = []
        for score, node in scored:
            segment = int(node.split(":", 1)[1])
            t_start, t_end = self.segments.get(segment, (0.0, 0.0))
            supporting = tuple(n for n in self.walk[node] if n in seeds)
            touching = [e for e in self.cited.get(segment, ())
                        if (e["source"] in seeds or e["target"] in seeds) and e["relation"] in _TOLD]
            touching.sort(key=lambda e: _TOLD.index(e["relation"]))
            relations = tuple(self.said(edge) for edge in touching)
            hits.append(Hit(segment, t_start, t_end, score,
                            tuple(self.nodes[n]["name"] for n in supporting),
                            relations[:MAX_RELATIONS], supporting))
        return hits

    def said(self, edge: dict) -> str:
        """'car 3 near person 2 (12.4-13.6 s)'."""
        source, target = (self.nodes.get(edge[end], {}).get("name", edge[end])
                          for end in ("source", "target"))
        return (f"{source} {edge['relation'].replace('-', ' ')} {target} "
                f"({edge['t_start']:.1f}-{edge['t_end']:.1f} s)")


def _phrase_pattern(name: str) -> re.Pattern:
    return re.compile(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])")


def _phrase(name: str, said: str) -> bool:
    return _phrase_pattern(name).search(said) is not None
