"""A person's edits to a video's knowledge graph through the Memory inspector's handlers: delete
and correct an edge, the changes table, and what later answers and rebuilds make of the edits.
On a copy of the real TUD-Campus clip's folder, so the shared library is never edited."""

from __future__ import annotations

import shutil

import gradio as gr
import pytest
import sqlite_utils

from app import graph_edits, handlers, inspector
from backend.agent.tools import ToolContext
from backend.answer import Answer, Confidence
from backend.graph import build
from backend.library import Library
from backend.memory.learn import _graph_fact
from tests.conftest import settings_for

CLIP = "mot15_TUD-Campus.mp4"
QUESTION = "How many people are in view at once?"
VIDEO, ANY = inspector.GRAPH_SCOPES[0], inspector.ANY


@pytest.fixture
def library(ingested, library_settings, tmp_path):
    """(settings, video id, its video.db) of a library holding a copy of TUD-Campus."""
    entry = Library(library_settings.home).get(ingested(CLIP).video_id)
    shutil.copytree(entry.folder, tmp_path / "videos" / entry.video_id)
    return settings_for(tmp_path), entry.video_id, tmp_path / "videos" / entry.video_id / "video.db"


def _edge(db_path, relation: str) -> dict:
    db = sqlite_utils.Database(db_path)
    return next(db.query("SELECT e.*, a.name AS a, b.name AS b FROM graph_edges e "
                         "JOIN graph_nodes a ON a.id = e.source JOIN graph_nodes b "
                         "ON b.id = e.target WHERE relation = ? ORDER BY e.id LIMIT 1", [relation]))


def _rows(table: dict) -> dict[int, dict]:
    return {row[0]: dict(zip(table["headers"], row)) for row in table["data"]}


def _said(db_path, edge: dict) -> list[dict]:
    """The edges of the video saying what `edge` said, whatever their ids now."""
    return list(sqlite_utils.Database(db_path).query(
        "SELECT * FROM graph_edges WHERE source = ? AND relation = ? AND target = ?",
        [edge["source"], edge["relation"], edge["target"]]))


def test_a_deleted_edge_leaves_the_table_and_the_db_and_a_rebuild_keeps_it_gone(library):
    settings, video_id, db_path = library
    near = _edge(db_path, "near")
    _, table, _, changes, message = handlers.on_graph_delete(settings, video_id, VIDEO, ANY, ANY,
                                                             near["id"])
    assert message == (f"✓ Deleted edge {near['id']} ({near['a']} near {near['b']}); later "
                       "answers and rebuilds will not bring it back.")
    assert near["id"] not in _rows(table) and _said(db_path, near) == []
    [change] = [dict(zip(changes["headers"], row)) for row in changes["data"]]
    assert change["action"] == "deleted" and change["by"] == "inspector"
    assert change["edge"] == f"{near['source']} · near · {near['target']}"
    build.write(sqlite_utils.Database(db_path))
    assert _said(db_path, near) == []
    _, table, *_ = handlers.on_graph(settings, video_id, VIDEO, "near", ANY)
    assert (near["a"], near["b"]) not in {(r["from"], r["to"]) for r in _rows(table).values()}


def test_a_corrected_edge_shows_its_new_values(library):
    settings, video_id, db_path = library
    edge = _edge(db_path, "appears-with")
    *_, message = handlers.on_graph_correct(settings, video_id, VIDEO, ANY, ANY, edge["id"],
                                            None, 0.25)
    assert message.startswith(f"✓ Corrected edge {edge['id']} ({edge['a']} appears-with "
                              f"{edge['b']}): confidence now 0.25;")
    _, table, _, changes, _ = handlers.on_graph_correct(settings, video_id, VIDEO, ANY, ANY,
                                                        edge["id"], "near", None)
    row = _rows(table)[edge["id"]]
    assert (row["relation"], row["confidence"]) == ("near", 0.25)
    assert [(r[1], r[4]) for r in changes["data"]] == [
        ("corrected", "relation now near"), ("corrected", "confidence now 0.25")]


@pytest.mark.parametrize("edge_id, relation, confidence, said", [
    (99999, None, 0.5, "The graph of mot15_TUD-Campus.mp4 has no edge 99999: pick an id"),
    (1, None, 2, "Cannot correct edge 1: confidence is between 0 and 1."),
    (1, None, None, "Choose a new relation or type a new confidence"),
    (None, "near", None, "Type an edge id first"),
])
def test_a_wrong_edit_is_a_clear_message_and_changes_nothing(library, edge_id, relation,
                                                              confidence, said):
    settings, video_id, db_path = library
    with pytest.raises(gr.Error, match=said) as raised:
        handlers.on_graph_correct(settings, video_id, VIDEO, ANY, ANY, edge_id, relation,
                                  confidence)
    assert raised.value.title == "Cannot do that"  # a known mistake, not an unexpected failure
    assert not sqlite_utils.Database(db_path)["graph_history"].exists()
    if edge_id == 99999:
        with pytest.raises(gr.Error, match=said):
            handlers.on_graph_delete(settings, video_id, VIDEO, ANY, ANY, edge_id)


def test_the_library_view_is_not_edited_and_says_so(library):
    settings, video_id, _ = library
    *_, changes, note = handlers.on_graph(settings, video_id, inspector.GRAPH_SCOPES[1], ANY, ANY)
    assert changes["data"] == [] and note == graph_edits.PER_VIDEO
    with pytest.raises(gr.Error, match="choose “This video” above"):
        handlers.on_graph_delete(settings, video_id, inspector.GRAPH_SCOPES[1], ANY, ANY, 1)


def _answer(video_id: str, text: str) -> Answer:
    return Answer(video_id=video_id, question=QUESTION, standalone_question=QUESTION,
                  options=None, answer=text, option=None, answered=True, times=[0.0, 1.2],
                  instance_ids=[], evidence=[], tree=[],
                  confidence=Confidence("medium", "computed", "1/1", ""))


def test_deleting_a_wrong_fact_keeps_it_deleted_after_the_next_answer_that_would_add_it(library):
    settings, video_id, db_path = library
    ctx = ToolContext(video_id=video_id, db_path=db_path, memory_folder=db_path.parent, llm=None,
                      embed=None, usage=None)
    _graph_fact(_answer(video_id, "9 people"), "sem-1", ctx)
    _, table, _, changes, _ = handlers.on_graph(settings, video_id, VIDEO, "answered", ANY)
    [fact] = _rows(table).values()
    assert (fact["origin"], fact["memory entry"]) == ("answer", "sem-1")
    assert [(r[1], r[5], r[6]) for r in changes["data"]] == [("added", "answer", "sem-1")]
    handlers.on_graph_delete(settings, video_id, VIDEO, ANY, ANY, fact["id"])
    _graph_fact(_answer(video_id, "9 people"), "sem-1", ctx)
    _, table, _, changes, _ = handlers.on_graph(settings, video_id, VIDEO, "answered", ANY)
    assert table["data"] == []
    assert [(r[1], r[5]) for r in changes["data"]] == [("deleted", "inspector"),
                                                       ("added", "answer")]
