"""Vector search over memory tables: when the ANN index appears, and that it still finds what
exhaustive search finds (recall against numpy brute force, filters, rows added after indexing).

Timings are in `python -m backend bench retrieval`, not here.
"""

from __future__ import annotations

import itertools

import lancedb
import numpy as np
import pytest

from backend.memory import vectors

ROWS = 20_000


@pytest.fixture(scope="module")
def memories():
    """Synthetic memory rows and their unit vectors: 20k to index, 2k to add later."""
    return vectors.synthetic_memories(ROWS + 2_000, seed=3)


@pytest.fixture(scope="module")
def indexed(memories, tmp_path_factory):
    rows, _ = memories
    table = lancedb.connect(tmp_path_factory.mktemp("vectors")).create_table("semantic", rows.slice(0, ROWS))
    assert vectors.ensure_index(table, 10_000)
    return table


def brute_force(matrix: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return list(np.argsort(-(matrix @ query))[:k])


def row_number(hit: dict) -> int:
    return int(hit["id"].removeprefix("sem-"), 16)


def table_has_index(table) -> bool:
    return vectors._vector_index(table) is not None


def test_no_index_below_threshold_then_one_above(memories, tmp_path):
    rows, _ = memories
    table = lancedb.connect(tmp_path).create_table("semantic", rows.slice(0, 3_000))
    assert not vectors.ensure_index(table, 5_000)
    assert list(table.list_indices()) == []

    table.add(rows.slice(3_000, 2_000))
    assert vectors.ensure_index(table, 5_000)
    [index] = table.list_indices()
    assert index.columns == ["vector"] and table.index_stats(index.name).distance_type == "cosine"
    # The common case after an add: nothing to do.
    assert not vectors.ensure_index(table, 5_000)


def test_indexed_search_agrees_with_brute_force(memories, indexed):
    _, matrix = memories
    matrix = matrix[:ROWS]
    assert table_has_index(indexed)
    queries = vectors._queries(matrix, 100, seed=3)
    recall, top1 = [], []
    for query in queries:
        hits = vectors.search(indexed, query, 5)
        truth = brute_force(matrix, query, 5)
        found = [row_number(h) for h in hits]
        recall.append(len(set(found) & set(truth)) / 5)
        top1.append(found[0] == truth[0])
        # similarity is the real cosine, best first; no internal columns leak out
        assert np.allclose([h["similarity"] for h in hits], matrix[found] @ query, atol=1e-4)
        assert all(a["similarity"] >= b["similarity"] for a, b in itertools.pairwise(hits))
        assert not {"vector", "_distance"} & set(hits[0])
    assert np.mean(recall) >= 0.95
    assert np.mean(top1) >= 0.95


def test_where_and_min_similarity(memories, indexed):
    rows, matrix = memories
    matrix = matrix[:ROWS]
    video_ids = np.array(rows.column("video_id").to_pylist()[:ROWS])
    video = video_ids[7]
    query = vectors._queries(matrix, 1, seed=11)[0]

    hits = vectors.search(indexed, query, 10, where=f"video_id = '{video}'")
    assert len(hits) == 10 and {h["video_id"] for h in hits} == {video}
    in_video = np.flatnonzero(video_ids == video)
    truth = in_video[brute_force(matrix[in_video], query, 10)]
    assert [row_number(h) for h in hits] == list(truth)

    ranked = vectors.search(indexed, query, 10)
    cut = ranked[4]["similarity"]
    kept = vectors.search(indexed, query, 10, min_similarity=cut)
    assert [h["id"] for h in kept] == [h["id"] for h in ranked[:5]]
    assert vectors.search(indexed, query, 10, min_similarity=1.01) == []


def test_rows_added_after_indexing_are_found(memories, tmp_path):
    rows, matrix = memories
    table = lancedb.connect(tmp_path).create_table("semantic", rows.slice(0, ROWS))
    assert vectors.ensure_index(table, 10_000)
    index = vectors._vector_index(table).name

    # A few one-row adds, as the memory store makes them: not in the index yet, still found.
    for i in range(ROWS, ROWS + 20):
        table.add(rows.slice(i, 1))
        vectors.ensure_index(table, 10_000)
    assert table.index_stats(index).num_unindexed_rows == 20
    for i in range(ROWS, ROWS + 20):
        [hit] = vectors.search(table, matrix[i], 1)
        assert row_number(hit) == i and hit["similarity"] > 0.999

    # Many one-row adds get compacted, and enough new rows get folded into the index.
    for i in range(ROWS + 20, ROWS + 60):
        table.add(rows.slice(i, 1))
        vectors.ensure_index(table, 10_000)
    assert table.stats()["fragment_stats"]["num_fragments"] < 32
    table.add(rows.slice(ROWS + 60, 1_000))
    assert vectors.ensure_index(table, 10_000)
    assert table.index_stats(index).num_unindexed_rows == 0
    for i in (ROWS + 5, ROWS + 45, ROWS + 900):
        assert row_number(vectors.search(table, matrix[i], 1)[0]) == i


def test_index_is_retrained_when_the_table_doubles(memories, tmp_path):
    rows, _ = memories
    table = lancedb.connect(tmp_path).create_table("semantic", rows.slice(0, 4_000))
    assert vectors.ensure_index(table, 4_000)
    first = vectors._vector_index(table).name
    table.add(rows.slice(4_000, 4_000))
    assert vectors.ensure_index(table, 4_000)
    [index] = table.list_indices()
    assert index.name != first
    assert table.index_stats(index.name).num_unindexed_rows == 0
