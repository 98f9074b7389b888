"""The knowledge-graph figure, the per-answer Graph panel and the inspector's graph browser, on
the real TUD-Campus clip's graph and on graphs made for the test."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields
from pathlib import Path

import gradio as gr
import networkx as nx
import pytest

from app import figures, graph_figure, handlers, inspector, panels
from app.errors import friendly
from app.layout import AnswerPanels
from backend.exports import read_only
from backend.graph.network import answer_subgraph, to_networkx
from backend.library import Library
from tests.conftest import settings_for

CLIP = "mot15_TUD-Campus.mp4"
RECORDED = Path(__file__).parent / "data" / "answer_tud_count_memory_off.json"
GRAPH_PANEL = [f.name for f in fields(AnswerPanels)].index("graph_plot")


@pytest.fixture(scope="module")
def tud(ingested, library_settings):
    return Library(library_settings.home).get(ingested(CLIP).video_id)


@pytest.fixture(scope="module")
def tud_graph(tud) -> nx.MultiDiGraph:
    with read_only(tud) as db:
        return to_networkx(db)


def _node_traces(fig) -> list:
    return [t for t in fig.data if t.meta and "kind" in t.meta]


def _points(fig) -> dict[str, tuple]:
    """node id -> (trace, index in it) for every node drawn."""
    return {node: (trace, i) for trace in _node_traces(fig)
            for i, node in enumerate(trace.customdata)}


def _answer(**changes) -> dict:
    return {**json.loads(RECORDED.read_text()), **changes}


def test_every_node_is_one_point_with_its_times_and_kind_colour(tud_graph):
    graph = tud_graph
    assert graph.number_of_nodes() >= 10 and graph.number_of_edges() > graph.number_of_nodes()
    fig = graph_figure.graph_figure(graph, ["kind:person"], title="t", empty="e")
    points = _points(fig)
    assert sum(len(t.customdata) for t in _node_traces(fig)) == graph.number_of_nodes()
    assert set(points) == set(graph)
    for node, (trace, i) in points.items():
        data = graph.nodes[node]
        assert trace.meta["kind"] == trace.name == data["kind"]
        assert trace.marker.color == graph_figure.NODE_COLOURS[data["kind"]]
        hover = trace.hovertext[i]
        assert f"{data['t_start']:.1f}-{data['t_end']:.1f} s" in hover and data["name"] in hover
        if data["segments"]:
            assert "segments " + ", ".join(map(str, data["segments"])) in hover
        size = graph_figure.SEED_SIZE if node == "kind:person" else graph_figure.NODE_SIZE
        assert trace.marker.size[i] == size
    # One legend entry per kind, and one hover marker per pair of nodes that are related.
    assert sorted(t.name for t in _node_traces(fig)) == sorted({k for _, k in graph.nodes(data="kind")})
    midpoints = next(t for t in fig.data if t.name == "relation")
    pairs = {frozenset((u, v)) for u, v in graph.edges()}
    assert len(midpoints.x) == len(pairs)
    relations = {d["relation"] for *_, d in graph.edges(data=True)}
    assert all(any(f"<b>{r}</b>" in h for h in midpoints.hovertext) for r in relations)


def test_the_layout_is_the_same_every_time(tud_graph):
    first, again = (_points(graph_figure.graph_figure(tud_graph, title="t", empty="e"))
                    for _ in range(2))
    assert {n: (t.x[i], t.y[i]) for n, (t, i) in first.items()} == \
        {n: (t.x[i], t.y[i]) for n, (t, i) in again.items()}


def test_an_empty_graph_is_an_explanatory_figure():
    fig = graph_figure.graph_figure(nx.MultiDiGraph(), title="Graph", empty="Nothing to link.")
    assert figures.is_empty_state(fig)
    assert fig.layout.annotations[0].text == "Nothing to link."


def test_a_large_graph_is_capped_with_the_seeds_kept_and_the_rest_counted():
    graph = nx.MultiDiGraph()
    for i in range(200):
        graph.add_node(f"object:{i}", kind="object", name=f"person {i}", t_start=0.0, t_end=1.0,
                       segments=[1])
    for i in range(1, 199):  # a chain, so every node but the ends has two relations
        graph.add_edge(f"object:{i}", f"object:{i + 1}", relation="near", t_start=0.0, t_end=1.0)
    fig = graph_figure.graph_figure(graph, ["object:0"], title="Graph", empty="e", cap=150)
    points = _points(fig)
    assert len(points) == 150 and "object:0" in points  # an unconnected seed is still drawn
    assert "object:199" not in points  # one relation only: among the least connected
    assert "(150 of 200 nodes shown, 50 left out)" in fig.layout.title.text
    assert not _node_traces(fig)[0].text  # too many to name beside the markers


def test_the_graph_panel_shows_what_the_answer_drew_on(tud, tud_graph):
    person = next(n for n, k in tud_graph.nodes(data="kind") if k == "object")
    number = int(person.split(":")[1])
    at = tud_graph.nodes[person]["t_start"]
    answer = _answer(instance_ids=[number], times=[at])
    with read_only(tud) as db:
        used = answer_subgraph(db, ["kind:person"], [number], [at])
    fig = panels.graph_panel(tud, answer)
    points = _points(fig)
    assert set(points) == set(used) and {"kind:person", person} <= set(points)
    trace, i = points["kind:person"]  # the question says "people": its seed
    assert trace.marker.size[i] == graph_figure.SEED_SIZE
    trace, i = points[person]
    assert trace.marker.size[i] == graph_figure.NODE_SIZE
    # Before any answer the whole graph; an answer naming nothing in it, an explanation.
    assert set(_points(panels.graph_panel(tud, None))) == set(tud_graph)
    nothing = panels.graph_panel(tud, _answer(standalone_question="what is said?"))
    assert figures.is_empty_state(nothing)


def test_the_answer_panels_include_the_graph(tud, library_settings):
    turns = [{"answer": _answer(video_id=tud.video_id)}]
    shown = handlers.on_panels(turns, 0, library_settings)
    assert len(shown) == len(fields(AnswerPanels))
    assert "kind:person" in _points(shown[GRAPH_PANEL])
    before = handlers.on_clear(tud.video_id, library_settings)[3:]
    assert len(_points(before[GRAPH_PANEL])) == tud.info()["graph"]["nodes"]


def _named_edges(tud, relation: str | None = None) -> list[tuple]:
    with read_only(tud) as db:
        return sorted(tuple(r.values()) for r in db.query(
            "SELECT e.relation, a.name, b.name FROM graph_edges e "
            "JOIN graph_nodes a ON a.id = e.source JOIN graph_nodes b ON b.id = e.target"
            + (" WHERE e.relation = :r" if relation else ""), {"r": relation}))


def test_the_inspector_lists_every_edge_and_filters_them(tud, tud_graph, library_settings):
    browse = friendly(inspector.graph)
    fig, table, note = browse(library_settings, tud.video_id, "This video", "any", "any")
    assert set(_points(fig)) == set(tud_graph)
    assert table["headers"] == ["id", "relation", "from", "to", "times", "confidence", "origin",
                                "memory entry"]
    assert sorted(tuple(r[1:4]) for r in table["data"]) == _named_edges(tud)
    with read_only(tud) as db:
        assert sorted(r[0] for r in table["data"]) == [r["id"] for r in db.query(
            "SELECT id FROM graph_edges ORDER BY id")]
    assert note.startswith(f"{tud_graph.number_of_nodes()} nodes and "
                           f"{tud_graph.number_of_edges()} relations")
    fig, table, note = browse(library_settings, tud.video_id, "This video", "near", "any")
    assert sorted(tuple(r[1:4]) for r in table["data"]) == _named_edges(tud, "near") != []
    assert "relation near" in note
    _, table, _ = browse(library_settings, tud.video_id, "This video", "any", "place")
    places = {n for n, k in tud_graph.nodes(data="kind") if k == "place"}
    named = {tud_graph.nodes[n]["name"] for n in places}
    assert table["data"] and all(r[2] in named or r[3] in named for r in table["data"])
    assert len(table["data"]) == sum(1 for u, v in tud_graph.edges() if {u, v} & places)


@pytest.fixture
def three_videos(tud, tmp_path):
    """A library of TUD-Campus, a copy of it under another id, and a copy without a graph (as
    an ingest from before graphs left it)."""
    for video_id, name in ((tud.video_id, tud.name), ("00000000000000aa", "copy.mp4"),
                           ("00000000000000bb", "old.mp4")):
        folder = tmp_path / "videos" / video_id
        folder.mkdir(parents=True)
        with sqlite3.connect(tud.db_path) as source, sqlite3.connect(folder / "video.db") as copy:
            source.backup(copy)
            copy.execute("UPDATE video SET id = ?, name = ?", (video_id, name))
            if name == "old.mp4":
                copy.execute("DROP TABLE graph_edges")
                copy.execute("DROP TABLE graph_nodes")
    return settings_for(tmp_path)


def test_the_inspector_shows_the_library_graph(tud, tud_graph, three_videos):
    fig, table, note = inspector.graph(three_videos, None, "Whole library")
    expected = {f"{video}/{n}" for video in (tud.video_id, "00000000000000aa") for n in tud_graph}
    assert set(_points(fig)) == expected
    assert table["headers"][-1] == "video"
    assert sorted(r[-1] for r in table["data"]) == \
        ["copy.mp4"] * tud_graph.number_of_edges() + [tud.name] * tud_graph.number_of_edges()
    trace, i = _points(fig)[f"00000000000000aa/{next(iter(tud_graph))}"]
    assert "video copy.mp4" in trace.hovertext[i]
    assert "1 of the 3 videos have no graph yet" in note
    assert fig.layout.title.text == "The knowledge graph of the library (3 videos)"


def test_the_inspector_asks_for_a_video_first(tmp_path):
    with pytest.raises(gr.Error, match="Pick a video first"):
        friendly(inspector.graph)(settings_for(tmp_path), None, "This video")
    fig, table, _ = inspector.graph(settings_for(tmp_path), None, "Whole library")
    assert figures.is_empty_state(fig) and table["data"] == []
