"""A video's knowledge graph from its tables, by code: no LLM, so it holds with the embedded 1.5B.

The LLM-heavy extraction of WorldMM and LightRAG needs 30B-class models; what the tables
already measured (who is in view with whom, in which order people come and go, what is said
and shown, in which shot and third of the picture) is structure enough. Every node and edge
keeps the span it holds and the fine segments (scenes ids) that support it, so a retrieval can
cite its times.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import sqlite_utils

from backend.graph import facts, schema
from backend.graph.network import has_graph
from backend.places import third
from models.keywords import keywords

# In view together for this long before "appears-with" is worth an edge.
TOGETHER_S = 1.0
# Centres closer than this many mean box heights count as near; a run of at least NEAR_SAMPLES
# sampled frames makes the edge (one frame of two passing walkers is not "near").
NEAR_HEIGHTS = 1.0
NEAR_SAMPLES = 3
# A place the object spends at least this share of its sightings in.
PLACE_SHARE = 0.25
# Caps that keep a busy video's graph readable and its retrieval fast.
MAX_TOPICS = 300
MAX_TEXTS = 200


@dataclass
class Graph:
    """Nodes and edges as rows for the two tables."""

    nodes: dict[str, dict] = field(default_factory=dict)
    edges: list[dict] = field(default_factory=list)

    def node(self, node_id: str, kind: str, name: str, times: list[float], segments: set[int],
             **detail) -> str:
        self.nodes[node_id] = {"id": node_id, "kind": kind, "name": name,
                               "t_start": min(times), "t_end": max(times),
                               "segments": json.dumps(sorted(segments)),
                               "detail": json.dumps(detail) if detail else None}
        return node_id

    def edge(self, source: str, target: str, relation: str, times: list[float],
             segments: set[int], confidence: float = 1.0) -> None:
        self.edges.append({"id": len(self.edges) + 1, "source": source, "target": target,
                           "relation": relation, "t_start": min(times), "t_end": max(times),
                           "segments": json.dumps(sorted(segments)),
                           "confidence": round(confidence, 3), "origin": "tables"})


class _Segments:
    """Time -> the fine segment (scenes row) holding it."""

    def __init__(self, db: sqlite_utils.Database):
        rows = list(db.query("SELECT id, t_start FROM scenes ORDER BY t_start"))
        self.ids = [r["id"] for r in rows]
        self.starts = [r["t_start"] for r in rows]

    def at(self, t: float) -> set[int]:
        if not self.ids:
            return set()
        return {self.ids[max(0, bisect.bisect_right(self.starts, t) - 1)]}

    def span(self, t0: float, t1: float) -> set[int]:
        if not self.ids:
            return set()
        lo = max(0, bisect.bisect_right(self.starts, t0) - 1)
        hi = max(lo, bisect.bisect_right(self.starts, t1) - 1)
        return set(self.ids[lo:hi + 1])

    def of(self, times) -> set[int]:
        return set().union(*(self.at(t) for t in times)) if times else set()


def build(db: sqlite_utils.Database) -> Graph:
    """The graph of the video whose tables are in `db` (not written; see `write`)."""
    graph = Graph()
    segments = _Segments(db)
    _objects(db, graph, segments)
    _speech(db, graph, segments)
    _texts(db, graph, segments)
    return graph


def write(db: sqlite_utils.Database) -> dict[str, int]:
    """Build the graph and (re)write its tables; returns the counts `info` shows. Facts that
    answers added stay, and a person's deletions and corrections are applied again."""
    graph = build(db)
    kept_nodes, kept_edges = [], []
    if has_graph(db):
        kept_edges = list(db.query("SELECT * FROM graph_edges WHERE origin LIKE 'answer:%'"))
        kept_nodes = list(db.query("SELECT * FROM graph_nodes WHERE kind = 'fact'"))
    edges = facts.respect_edits(db, graph.edges)
    for k, edge in enumerate(edges + kept_edges, start=1):
        edge["id"] = k
    with db.conn:
        schema.create(db)
        db["graph_nodes"].insert_all([*graph.nodes.values(), *kept_nodes])
        db["graph_edges"].insert_all(edges + kept_edges)
    return {"nodes": len(graph.nodes) + len(kept_nodes), "edges": len(edges) + len(kept_edges)}


def ensure(db: sqlite_utils.Database) -> None:
    """Build the graph of a video ingested before graphs existed; the tables it comes from are
    all there, so its graph is the one a new ingest would write."""
    if not has_graph(db) and db["scenes"].exists():
        write(db)


def _objects(db: sqlite_utils.Database, graph: Graph, segments: _Segments) -> None:
    video = next(db.query("SELECT width, height, duration FROM video"), None)
    if video is None:
        return
    width, height, duration = video["width"] or 1, video["height"] or 1, video["duration"] or 0.0
    sightings: dict[int, dict[float, tuple]] = defaultdict(dict)
    for r in db.query("SELECT instance_id, t, x1, y1, x2, y2 FROM detections ORDER BY t"):
        sightings[r["instance_id"]][r["t"]] = (r["x1"], r["y1"], r["x2"], r["y2"])
    instances = list(db.query("SELECT id, category, first_seen, last_seen, appearance, action "
                              "FROM instances ORDER BY first_seen, id"))
    shots = list(db.query("SELECT id, t_start, t_end FROM shots ORDER BY id"))
    ids = {}
    for inst in instances:
        seen = sorted(sightings.get(inst["id"], {})) or [inst["first_seen"], inst["last_seen"]]
        node = graph.node(f"object:{inst['id']}", "object", f"{inst['category']} {inst['id']}",
                          seen, segments.of(seen), category=inst["category"],
                          appearance=inst["appearance"], action=inst["action"])
        ids[inst["id"]] = node
        kind = f"kind:{inst['category']}"
        if kind not in graph.nodes:
            graph.node(kind, "kind", inst["category"], seen, set())
        graph.edge(node, kind, "is-a", seen, segments.of(seen))
        for shot in shots:
            inside = [t for t in seen if shot["t_start"] <= t < shot["t_end"]]
            if inside:
                graph.edge(node, f"shot:{shot['id']}", "in-shot", inside, segments.of(inside))
        places = defaultdict(list)
        for t in seen:
            if t in sightings[inst["id"]]:
                x1, y1, x2, y2 = sightings[inst["id"]][t]
                places[third((x1 + x2) / 2 / width, (y1 + y2) / 2 / height)].append(t)
        for place, times in places.items():
            if len(times) >= PLACE_SHARE * len(seen):
                graph.edge(node, _place(graph, place, times, segments), "in-place", times,
                           segments.of(times), len(times) / len(seen))
    for shot in shots:
        graph.node(f"shot:{shot['id']}", "shot", f"shot {shot['id']}",
                   [shot["t_start"], shot["t_end"]], segments.span(shot["t_start"], shot["t_end"]))
    _pairs(instances, sightings, ids, graph, segments)
    _order(instances, ids, graph, segments, duration)


def _place(graph: Graph, place: str, times: list[float], segments: _Segments) -> str:
    node_id = f"place:{place}"
    known = graph.nodes.get(node_id)
    if known:
        times = [known["t_start"], known["t_end"], *times]
        segments_ = set(json.loads(known["segments"])) | segments.of(times)
    else:
        segments_ = segments.of(times)
    return graph.node(node_id, "place", place, times, segments_)


def _pairs(instances: list[dict], sightings: dict[int, dict[float, tuple]], ids: dict[int, str],
           graph: Graph, segments: _Segments) -> None:
    for k, a in enumerate(instances):
        for b in instances[k + 1:]:
            if b["first_seen"] > a["last_seen"]:
                continue
            both = sorted(set(sightings.get(a["id"], {})) & set(sightings.get(b["id"], {})))
            if not both or both[-1] - both[0] < TOGETHER_S:
                continue
            graph.edge(ids[a["id"]], ids[b["id"]], "appears-with", both, segments.of(both))
            near = [t for t in both if _near(sightings[a["id"]][t], sightings[b["id"]][t])]
            if len(near) >= NEAR_SAMPLES:
                graph.edge(ids[a["id"]], ids[b["id"]], "near", near, segments.of(near),
                           len(near) / len(both))


def _near(a: tuple, b: tuple) -> bool:
    ha, hb = a[3] - a[1], b[3] - b[1]
    dx = (a[0] + a[2] - b[0] - b[2]) / 2
    dy = (a[1] + a[3] - b[1] - b[3]) / 2
    return (dx * dx + dy * dy) ** 0.5 <= NEAR_HEIGHTS * (ha + hb) / 2


def _order(instances: list[dict], ids: dict[int, str], graph: Graph, segments: _Segments,
           duration: float) -> None:
    """Each object to the next to arrive, and to the next to leave (of those gone before the end:
    one still in view at the last frame has not left)."""
    arrivals = sorted(instances, key=lambda i: (i["first_seen"], i["id"]))
    for a, b in zip(arrivals, arrivals[1:]):
        times = [a["first_seen"], b["first_seen"]]
        graph.edge(ids[b["id"]], ids[a["id"]], "enters-after", times, segments.of(times))
    last = max((i["last_seen"] for i in instances), default=duration)
    gone = sorted((i for i in instances if i["last_seen"] < last),
                  key=lambda i: (i["last_seen"], i["id"]))
    for a, b in zip(gone, gone[1:]):
        times = [a["last_seen"], b["last_seen"]]
        graph.edge(ids[a["id"]], ids[b["id"]], "leaves-before", times, segments.of(times))


def _speech(db: sqlite_utils.Database, graph: Graph, segments: _Segments) -> None:
    said: dict[str, list[tuple[float, float]]] = defaultdict(list)
    spans = []
    for row in db.query("SELECT t_start, t_end, text FROM speech ORDER BY t_start"):
        spans.append((row["t_start"], row["t_end"]))
        for word in set(keywords(row["text"] or "")):
            if len(word) >= 3 and not word.isdigit():
                said[word].append((row["t_start"], row["t_end"]))
    if not spans:
        return
    times = [t for span in spans for t in span]
    speaker = graph.node("speaker:1", "speaker", "speaker", times,
                         set().union(*(segments.span(*s) for s in spans)))
    frequent = Counter({w: len(s) for w, s in said.items()}).most_common(MAX_TOPICS)
    for word, _ in frequent:
        spans_ = said[word]
        times = [t for span in spans_ for t in span]
        support = set().union(*(segments.span(*s) for s in spans_))
        topic = graph.node(f"topic:{word}", "topic", word, times, support, mentions=len(spans_))
        graph.edge(speaker, topic, "says", times, support)


def _texts(db: sqlite_utils.Database, graph: Graph, segments: _Segments) -> None:
    read: dict[str, list[float]] = defaultdict(list)
    shown: dict[str, str] = {}
    for row in db.query("SELECT t, text FROM ocr ORDER BY t"):
        key = re.sub(r"\s+", " ", (row["text"] or "").strip().lower())
        if len(key) >= 2:
            read[key].append(row["t"])
            shown.setdefault(key, " ".join(row["text"].split()))
    shots = list(db.query("SELECT id, t_start, t_end FROM shots ORDER BY id"))
    for key, times in sorted(read.items(), key=lambda kv: -len(kv[1]))[:MAX_TEXTS]:
        node = graph.node(f"text:{key}", "text", shown[key], times, segments.of(times),
                          sightings=len(times))
        for shot in shots:
            inside = [t for t in times if shot["t_start"] <= t < shot["t_end"]]
            if inside:
                graph.edge(f"shot:{shot['id']}", node, "shows-text", inside, segments.of(inside))
