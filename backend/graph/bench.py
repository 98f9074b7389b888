"""How personalised PageRank scales: seconds per question on synthetic graphs of a given size,
shaped like a video's (topics said across segments, each edge citing one or two segments)."""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import sqlite_utils

from backend.graph import schema
from backend.graph.ppr import GraphIndex

NODES_PER_EDGE = 0.2     # our clips' graphs have 3-7 edges per node
SEGMENTS_PER_NODE = 0.5


def ppr_bench(edges: tuple[int, ...] = (10_000, 100_000), questions: int = 20, seed: int = 0) -> dict:
    return {"questions": questions, "cpus": os.cpu_count(),
            "load_average": round(os.getloadavg()[0], 2),
            "sizes": [_measure(n, questions, seed) for n in edges]}


def _measure(n_edges: int, questions: int, seed: int) -> dict:
    rng = random.Random(seed)
    n_nodes = max(2, int(n_edges * NODES_PER_EDGE))
    n_segments = max(1, int(n_nodes * SEGMENTS_PER_NODE))
    with tempfile.TemporaryDirectory(prefix="memoryreel-ppr-") as folder:
        db = sqlite_utils.Database(Path(folder) / "graph.db")
        db["scenes"].insert_all({"id": s, "t_start": 2.0 * (s - 1), "t_end": 2.0 * s}
                                for s in range(1, n_segments + 1))
        schema.create(db)
        db["graph_nodes"].insert_all(
            {"id": f"topic:word{i}", "kind": "topic", "name": f"word{i}", "t_start": 0.0,
             "t_end": 1.0, "segments": json.dumps(rng.sample(range(1, n_segments + 1),
                                                             min(n_segments, rng.randint(1, 3)))),
             "detail": None} for i in range(n_nodes))
        db["graph_edges"].insert_all(
            {"id": e + 1, "source": f"topic:word{rng.randrange(n_nodes)}",
             "target": f"topic:word{rng.randrange(n_nodes)}", "relation": "appears-with",
             "t_start": 0.0, "t_end": 1.0, "segments": json.dumps([rng.randint(1, n_segments)]),
             "confidence": 1.0, "origin": "tables"} for e in range(n_edges))
        started = time.perf_counter()
        index = GraphIndex(db)
        load_s = time.perf_counter() - started
        seconds = []
        for _ in range(questions):
            a, b = rng.randrange(n_nodes), rng.randrange(n_nodes)
            started = time.perf_counter()
            hits = index.search(f"When does the speaker say word{a} and word{b}?")
            seconds.append(time.perf_counter() - started)
            if not hits:
                raise RuntimeError("a question naming two topics found no segment")
        db.close()
    seconds.sort()
    return {"edges": n_edges, "nodes": n_nodes, "segments": n_segments,
            "walk_edges": index.walk.number_of_edges(), "load_s": round(load_s, 3),
            "p50_s": round(statistics.median(seconds), 4),
            "p95_s": round(seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))], 4)}
