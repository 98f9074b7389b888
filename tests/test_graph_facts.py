"""Checked answers as graph edges, merged as memory merges facts, and a person's edits to the graph
that later answers and rebuilds respect. On a copy of the real TUD-Campus graph."""

from __future__ import annotations

import json
import shutil

import pytest
import sqlite_utils

from backend.agent.tools import ToolContext
from backend.answer import Answer, Confidence
from backend.graph import build, facts
from backend.library import Library
from backend.memory.learn import _graph_fact

QUESTION = "How many people are in view at once?"


@pytest.fixture
def video(ingested, library_settings, tmp_path):
    """A copy of TUD-Campus's folder, so edits here never reach the shared library."""
    entry = Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id)
    folder = tmp_path / entry.video_id
    shutil.copytree(entry.folder, folder)
    return entry, folder / "video.db"


def _answer(entry, text: str) -> Answer:
    return Answer(video_id=entry.video_id, question=QUESTION, standalone_question=QUESTION,
                  options=None, answer=text, option=None, answered=True, times=[0.0, 1.2],
                  instance_ids=[], evidence=[], tree=[],
                  confidence=Confidence("medium", "computed", "1/1", ""))


def _facts(db_path) -> list[dict]:
    db = sqlite_utils.Database(db_path)
    return list(db.query("SELECT e.*, n.name FROM graph_edges e JOIN graph_nodes n "
                         "ON n.id = e.target WHERE e.relation = 'answered'"))


def _context(entry, db_path) -> ToolContext:
    return ToolContext(video_id=entry.video_id, db_path=db_path, memory_folder=db_path.parent,
                       llm=None, embed=None, usage=None)


def test_a_checked_answer_becomes_an_edge_from_what_it_is_about(video):
    entry, db_path = video
    _graph_fact(_answer(entry, "6 people"), "semantic-1", _context(entry, db_path))
    [edge] = _facts(db_path)
    assert edge["source"] == "kind:person" and edge["name"] == f"{QUESTION} 6 people"
    assert edge["origin"] == "answer:semantic-1" and (edge["t_start"], edge["t_end"]) == (0.0, 1.2)
    assert [h["action"] for h in facts.history(sqlite_utils.Database(db_path))] == ["added"]


def test_a_newer_answer_to_the_same_question_replaces_the_edge_and_keeps_the_old(video):
    entry, db_path = video
    ctx = _context(entry, db_path)
    _graph_fact(_answer(entry, "5 people"), "semantic-1", ctx)
    _graph_fact(_answer(entry, "6 people"), "semantic-2", ctx)
    [edge] = _facts(db_path)
    assert edge["name"].endswith(" 6 people") and edge["origin"] == "answer:semantic-2"
    changes = facts.history(sqlite_utils.Database(db_path))
    assert [(h["action"], h["before"], h["after"]) for h in changes] == [
        ("added", "", f"{QUESTION} 5 people"), ("replaced", f"{QUESTION} 5 people", f"{QUESTION} 6 people")]


def test_a_deleted_fact_stays_deleted_after_the_next_answer_that_would_add_it(video):
    entry, db_path = video
    ctx = _context(entry, db_path)
    _graph_fact(_answer(entry, "5 people"), "semantic-1", ctx)
    facts.delete(db_path, _facts(db_path)[0]["id"])
    _graph_fact(_answer(entry, "5 people"), "semantic-1", ctx)
    assert _facts(db_path) == []
    assert facts.record(db_path, entry_id="semantic-3", question=QUESTION.upper(),
                        answer="7 people", times=[], source="kind:person") == "deleted by a person"


def test_edits_to_table_edges_survive_a_rebuild_and_facts_are_kept(video):
    entry, db_path = video
    db = sqlite_utils.Database(db_path)
    _graph_fact(_answer(entry, "6 people"), "semantic-1", _context(entry, db_path))
    near = next(db.query("SELECT * FROM graph_edges WHERE relation = 'near' LIMIT 1"))
    wrong = next(db.query("SELECT * FROM graph_edges WHERE relation = 'appears-with' LIMIT 1"))
    facts.correct(db_path, near["id"], confidence=0.1)
    facts.delete(db_path, wrong["id"])
    build.write(db)
    rebuilt = list(db.query("SELECT * FROM graph_edges"))
    assert not [e for e in rebuilt if (e["source"], e["relation"], e["target"]) ==
                (wrong["source"], "appears-with", wrong["target"])]
    [again] = [e for e in rebuilt if (e["source"], e["relation"], e["target"]) ==
               (near["source"], "near", near["target"])]
    assert again["confidence"] == 0.1
    assert len(_facts(db_path)) == 1


def test_a_correction_names_a_known_relation(video):
    _, db_path = video
    with pytest.raises(ValueError, match="unknown relation"):
        facts.correct(db_path, 1, relation="likes")
    with pytest.raises(LookupError, match="no edge 99999"):
        facts.delete(db_path, 99999)


def test_llm_triples_from_speech_merge_into_the_graph_with_their_line_times(ingested,
                                                                           library_settings,
                                                                           tmp_path):
    """The merge rule and provenance, with a scripted model: the real one's triples vary."""
    from backend.factory import embedder_for
    from backend.graph import triples
    from tests.fakes import ScriptedLLM

    entry = Library(library_settings.home).get(ingested("autoeditor_example_speech.mp4").video_id)
    shutil.copy(entry.db_path, tmp_path / "video.db")
    db = sqlite_utils.Database(tmp_path / "video.db")
    speech = triples.lines(db)
    assert speech and all(t0 < t1 for t0, t1, _ in speech)
    script = {"triples": [
        {"line": 1, "subject": "the speaker", "relation": "says", "object": "hello"},
        {"line": 1, "subject": "this video", "relation": "is an", "object": "example"},
        {"line": 1, "subject": "this video", "relation": "is an", "object": "example"},
        {"line": 1, "subject": "a purple elephant", "relation": "stands on", "object": "the moon"},
        {"line": 99, "subject": "nobody", "relation": "reads", "object": "line 99"},
    ]}
    llm = ScriptedLLM([script] * len(triples._batches(speech)))
    counts = triples.add(db, llm, embedder_for(library_settings).embed)
    assert "1. " in llm.prompts[0] and counts["triples"] >= 3
    added = list(db.query("SELECT * FROM graph_edges WHERE origin = 'llm'"))
    # 'the speaker' is the speaker node and 'this video' the spoken topic 'video', by meaning;
    # what is like nothing in the graph is an entity; the twice read triple is one edge; the
    # line it names gives its time; a line that does not exist gives nothing.
    assert {(e["source"], e["relation"], e["target"]) for e in added} == {
        ("speaker:1", "says", "topic:hello"), ("topic:video", "is-an", "topic:example"),
        ("entity:a purple elephant", "stands-on", "entity:the moon")}
    assert len(added) == len({(e["source"], e["relation"], e["target"]) for e in added})
    first = speech[0]
    says = next(e for e in added if e["relation"] == "says")
    assert (says["t_start"], says["t_end"]) == (first[0], first[1])
    assert json.loads(says["segments"])


def test_an_edge_whose_relation_was_corrected_then_deleted_stays_deleted_on_a_rebuild(video):
    _, db_path = video
    db = sqlite_utils.Database(db_path)
    near = next(db.query("SELECT * FROM graph_edges WHERE relation = 'near' LIMIT 1"))

    def between() -> list[str]:
        return sorted(e["relation"] for e in db.query(
            "SELECT relation FROM graph_edges WHERE source = ? AND target = ?",
            [near["source"], near["target"]]))
    before = between()
    facts.correct(db_path, near["id"], relation="in-place")  # a relation no two objects have
    facts.delete(db_path, near["id"])
    build.write(db)
    after = before.copy()
    after.remove("near")
    assert between() == after
