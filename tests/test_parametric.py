"""Parametric memory (issue 38) over the real TUD-Campus tables, with a stand-in for the distilled
model: its answer decides only with a live checked fact replayed for the question; a deleted
fact, or one whose graph edge a person deleted, is never answered from the weights; training
pairs come from the checked facts alone. The real distillation is tested in test_distill.py."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace

import pytest
import sqlite_utils

from backend import ask as ask_module
from backend.ask import ask
from backend.graph import facts as graph_facts
from backend.library import Library
from backend.memory import parametric
from backend.memory.reuse import asked_of
from backend.memory.store import MemoryStore
from models.llm import Reply, Usage
from tests.fakes import ScriptedLLM, step

TUD = "mot15_TUD-Campus.mp4"
LEARNED = "what is the name of the university campus in this video"
ASKED = "what is this university campus called"
OPTIONS = ["TU Darmstadt", "ETH Zurich", "MIT", "Oxford", "none of these"]


class WeightsModel:
    """The distilled model's stand-in: one answer, said with the given probability per token."""

    name = "distilled"

    def __init__(self, answer: str, p: float = 0.95):
        self.answer, self.logprob = answer, math.log(p)
        self.asked: list[str] = []

    def complete(self, messages, *, response_model=None, max_tokens=512, temperature=0.0,
                 logprobs=False):
        self.asked.append(messages[-1]["content"])
        return Reply(text=f"{self.answer} (at 1.0 s)", parsed=None,
                     usage=Usage(calls=1, prompt_tokens=30, completion_tokens=8, seconds=0.01),
                     token_logprobs=[self.logprob] * 6)


@pytest.fixture
def video(ingested, library_settings, tmp_path, monkeypatch):
    """(entry, settings with its own memory, the checked fact's id, the distilled model), the
    fact distilled: a manifest and an adapter file as `memory distill` leaves them."""
    entry = Library(library_settings.home).get(ingested(TUD).video_id)
    # The router reads questions it knows; this one is for memory alone.
    settings = replace(library_settings, memory_dir=str(tmp_path / "memory"), memory=True,
                       answer_checks=False, parametric=True)
    store = MemoryStore(settings)
    fact = store.add("semantic", {
        "video_id": entry.video_id, "question": LEARNED, "text": "TU Darmstadt.",
        "answer": OPTIONS[0], "times": [1.0], "verdict": "checked", "support": 1,
        "asked": asked_of(LEARNED, 100.0).to_json(), "query": ""}, store.embed([LEARNED])[0])
    folder = parametric.folder(settings)
    folder.mkdir(parents=True)
    parametric.adapter_path(settings).write_bytes(b"GGUF")
    done = parametric.Manifest(distilled_at="2026-11-27T00:00:00+00:00", base="0.5b", steps=20,
                               pairs=4, seconds=1.0, facts=[fact],
                               videos={entry.video_id: {"facts": 1, "pairs": 4, "at": "x"}})
    (folder / "manifest.json").write_text(json.dumps(done.as_dict()), encoding="utf-8")
    model = WeightsModel(OPTIONS[0])
    monkeypatch.setattr(ask_module, "parametric_llm", lambda settings, adapter, base: model)
    return entry, settings, fact, model


def test_the_weights_answer_with_a_live_fact_and_no_planner_call(video):
    entry, settings, fact, model = video
    answer = ask(entry.video_id, ASKED, settings, options=OPTIONS, llm=ScriptedLLM([]))
    assert answer.option == 0 and answer.confidence.basis == "memory"
    assert answer.confidence.level == "medium"  # memory is never high
    assert answer.memory.parametric["agreed"] == fact and answer.memory.parametric["decided"]
    assert answer.memory.decided_by.id == fact
    assert answer.usage.llm_calls == 1  # the distilled model's call, counted; no planner call
    assert model.asked == [parametric.prompt(entry.name, ASKED)]


def test_a_deleted_fact_is_never_answered_from_the_weights(video):
    entry, settings, fact, model = video
    MemoryStore(settings).delete(fact)
    planner = ScriptedLLM([step("Answer", OPTIONS[1])])
    answer = ask(entry.video_id, ASKED, settings, options=OPTIONS, llm=planner, n_solutions=1,
                 learn_now=False)
    # The weights still say the deleted answer; it is shown, not used.
    assert answer.memory.parametric == {**answer.memory.parametric, "agreed": None,
                                        "decided": False, "answer": OPTIONS[0]}
    assert answer.option == 1 and planner.replies == []


def test_an_unsure_model_decides_nothing(video):
    entry, settings, fact, model = video
    model.logprob = -2.0  # p = 0.14 a token
    planner = ScriptedLLM([step("Answer", OPTIONS[0])])
    answer = ask(entry.video_id, ASKED, settings, options=OPTIONS, llm=planner, n_solutions=1,
                 learn_now=False)
    assert answer.memory.parametric["agreed"] == fact
    assert not answer.memory.parametric["decided"] and planner.replies == []


def test_an_answer_edge_a_person_deleted_masks_its_fact(video, tmp_path):
    entry, settings, fact, model = video
    db_path = tmp_path / "video.db"
    shutil.copyfile(entry.db_path, db_path)  # edits here never reach the shared library
    assert graph_facts.record(db_path, entry_id=fact, question=LEARNED, answer=OPTIONS[0],
                              times=[1.0], source="kind:person") == "added"
    facts = MemoryStore(settings).list(kind="semantic")
    assert [f.id for f in parametric.unedited(facts, db_path)] == [fact]
    edge = next(sqlite_utils.Database(db_path).query(
        "SELECT id FROM graph_edges WHERE origin = ?", [f"answer:{fact}"]))["id"]
    graph_facts.delete(db_path, edge)
    assert parametric.unedited(facts, db_path) == []
    assert graph_facts.edited_answers(db_path) == {fact}
    # The same question answered and learnt again, under a new id: the graph refuses its edge,
    # and the fact is masked as well.
    store = MemoryStore(settings)
    again = store.add("semantic", {
        "video_id": entry.video_id, "question": LEARNED.upper() + "  ", "text": "TU Darmstadt.",
        "answer": OPTIONS[0], "times": [1.0], "verdict": "checked", "support": 1,
        "asked": asked_of(LEARNED, 100.0).to_json(), "query": ""}, store.embed([LEARNED])[0])
    assert graph_facts.record(db_path, entry_id=again, question=LEARNED, answer=OPTIONS[0],
                              times=[1.0], source="kind:person") == "deleted by a person"
    facts = MemoryStore(settings).list(kind="semantic")
    assert again in {f.id for f in facts} and parametric.unedited(facts, db_path) == []


def test_training_pairs_are_the_checked_facts_in_several_wordings(video):
    entry, settings, fact, model = video
    pairs, videos, used = parametric.training_pairs(settings, [entry.video_id])
    assert used == [fact] and videos[entry.video_id] == {"facts": 1, "pairs": len(pairs)}
    assert len({p.prompt for p in pairs}) == len(pairs) >= 3
    assert all(entry.name in p.prompt for p in pairs)
    assert {p.answer for p in pairs} == {f"{OPTIONS[0]} (at 1.0 s)"}
    MemoryStore(settings).delete(fact)
    with pytest.raises(Exception, match="no checked facts"):
        parametric.distill(settings, [entry.video_id])
