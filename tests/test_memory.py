"""Evolving memory: replay sizes, the similarity threshold, persistent replay counts, deletion,
validation, decision patterns and short-term chat memory.

The replay arithmetic is checked by hand; where the LLM matters (validation, patterns,
follow-up questions) the real embedded model answers.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace

import pytest

from backend.answer import Answer, Step
from backend.ask import ask
from backend.factory import embedder_for, llm_for
from backend.agent.tools import ToolContext
from backend.library import Library
from backend.memory import learn as learning
from backend.memory.recall import Assessment, recall
from backend.memory.replay import MemoryOptions, complexity, keyword_entropy, replay_k
from backend.memory.store import MemoryStore
from backend.sql_runner import run_query
from models.keywords import keywords, stopwords
from models.llm import Usage
from tests.conftest import REPO

TUD = "mot15_TUD-Campus.mp4"


# --- replay arithmetic, checked by hand ---------------------------------------------------------

def test_stopwords_are_nltk_english_list_without_a_download(monkeypatch):
    import nltk

    monkeypatch.setattr(nltk, "download", lambda *a, **k: pytest.fail("tried to download"))
    stop = stopwords()
    assert len(stop) == 198 and {"the", "why", "how", "after", "don't"} <= stop
    assert keywords("Why did the man in red stop after the dog ran?") == ["man", "red", "stop",
                                                                          "dog", "ran"]


@pytest.mark.parametrize("question, p, entropy, k", [
    # 5 distinct keywords (many people walk left right): log2(5) = 2.3219 bits;
    # C = 0.03 * 0.2 + 0.2 * 2.3219 = 0.4704; k = round(1 + 4 * 0.4704) = round(2.88) = 3
    ("How many people walk from left to right?", 0.2, math.log2(5), 3),
    # keywords man, man, dog: p = 2/3, 1/3 -> 0.9183 bits; C = 0.03 + 0.1837 = 0.2137;
    # k = round(1.85) = 2
    ("The man, the man and the dog?", 1.0, 0.9183, 2),
    # only stopwords: E = 0; C = 0.03 * 1 = 0.03; k = round(1.12) = 1
    ("Is it there?", 1.0, 0.0, 1),
    # 40 distinct keywords: log2(40) = 5.32 bits -> C clamps to 1 -> k = 5
    (" ".join(f"word{i}" for i in range(40)), 0.0, math.log2(40), 5),
])
def test_complexity_and_replay_sizes(question, p, entropy, k):
    e = keyword_entropy(question)
    assert e == pytest.approx(entropy, abs=1e-3)
    c = complexity(p, e)
    assert 0.0 <= c <= 1.0
    assert c == pytest.approx(min(1.0, 0.03 * p + 0.2 * entropy), abs=1e-3)
    assert replay_k(c) == k


def test_replay_size_rounds_halves_up():
    # 1 + 0.375 * 4 = 2.5: Python's round() would give 2
    assert replay_k(0.375) == 3 and replay_k(0.0) == 1 and replay_k(1.0) == 5


# --- the store: threshold, counts across a restart, deletion ------------------------------------

@pytest.fixture
def memory_settings(library_settings, tmp_path):
    return replace(library_settings, memory_dir=str(tmp_path / "memory"))


def _fact(store: MemoryStore, video_id: str, question: str, text: str) -> str:
    return store.add("semantic", {"video_id": video_id, "question": question, "text": text,
                                  "answer": text, "times": [1.0], "verdict": "checked",
                                  "support": 1}, store.embed([question])[0])


def test_a_fact_updated_with_no_times_keeps_its_update(memory_settings):
    # An answer decided from the kinds tracked has no times; LanceDB refused the empty list and
    # the repeated fact's update was lost.
    store = MemoryStore(memory_settings)
    kept = _fact(store, "v", "what kinds of vehicles pass", "Cars pass.")
    store.update("semantic", kept, {"times": [], "support": 2, "answer": "cars and a lorry"})
    entry = store.search("what kinds of vehicles pass", kind="semantic", video_id="v", k=1)[0]
    assert (entry.id, entry.times, entry.support) == (kept, [], 2)


def test_replay_threshold_counts_and_restart(ingested, memory_settings):
    video_id = ingested(TUD).video_id
    store = MemoryStore(memory_settings)
    kept = _fact(store, video_id, "how many people are in the first frame?",
                 "Five people are in view in the first frame.")
    _fact(store, video_id, "what colour is the jacket of person 2?", "Person 2 wears a dark jacket.")
    _fact(store, "another-video", "how many people are in the first frame?", "Two people.")

    close = store.search("how many persons can be seen in the first frame", kind="semantic",
                         video_id=video_id, k=5)
    assert close[0].id == kept and close[0].similarity >= 0.5
    assert all(h.video_id == video_id for h in close)  # semantic memory is per video
    far = "which word does the speaker say at the end"
    assert store.search(far, kind="semantic", video_id=video_id, k=5)[0].similarity < 0.5

    options = MemoryOptions(procedural=False)
    simple = Assessment(task_type="descriptive", complexity=0.0)
    near = recall("how many persons can be seen in the first frame",
                  store.embed(["how many persons can be seen in the first frame"])[0],
                  video_id, store, options, simple, min_similarity=0.5)
    assert [r.id for r in near.replayed][:1] == [kept]
    assert near.k_s == replay_k(near.complexity) and len(near.replayed) <= near.k_s
    assert "Five people" in near.context
    assert recall(far, store.embed([far])[0], video_id, store, options, simple,
                  min_similarity=0.5).replayed == []

    recall("how many persons can be seen in the first frame",
           store.embed(["how many persons can be seen in the first frame"])[0],
           video_id, store, options, simple, min_similarity=0.5)
    # A new process reads the same counts: they are on disk, not in this process.
    listed = subprocess.run(
        [sys.executable, "-m", "backend", "memory", "list", "--type", "semantic", "--json"],
        env={**_env(memory_settings)}, cwd=REPO, capture_output=True, text=True, check=True)
    counts = {e["id"]: e["replays"] for e in json.loads(listed.stdout)["entries"]}
    assert counts[kept] == 2
    assert sum(counts.values()) == 2


def test_the_rating_is_asked_for_only_where_it_can_change_the_replay(memory_settings):
    """P(q) weighs 0.03 in C(q): it can change k only near a rounding boundary. The decision
    pattern then follows the most similar replayed workflow's task type, with no rating call."""
    store = MemoryStore(memory_settings)
    for question, task_type in (("when does the first person leave the picture", "temporal"),
                                ("at what time does the first person walk out of view", "temporal")):
        store.add("procedural", {"video_id": "v", "question": question, "answer": "2.0 s",
                                 "text": "When(first person leaves) -> Answer",
                                 "task_type": task_type, "workflow": "[]"},
                  store.embed([question])[0])
    store.upsert_pattern("temporal", "temporal: ask When first, then answer", 6)
    store.upsert_pattern("descriptive", "descriptive: ask Count first, then answer", 6)
    asked = []

    def rate() -> Assessment:
        asked.append(1)
        return Assessment(task_type="descriptive", complexity=1.0)

    def run(question: str):
        return recall(question, store.embed([question])[0], "v", store, MemoryOptions(), rate,
                      min_similarity=0.3)

    short = "when does the first person leave"  # 3 keywords: k is 3 whatever P(q) is
    assert replay_k(complexity(0.0, keyword_entropy(short))) == \
        replay_k(complexity(1.0, keyword_entropy(short)))
    got = run(short)
    assert asked == [] and not got.rated and len(got.plans) == 2
    assert got.pattern.task_type == "temporal"
    # 8 different keywords: E(q) = 3 bits, k = 4 at P = 0 but 5 at P = 1, so P(q) is asked.
    long = "when does the first tall person leave through the left gate near bicycles"
    assert keyword_entropy(long) == 3.0
    assert run(long).rated and asked == [1]
    # No workflow near enough to pick the pattern: only the rating can, and it waits until a
    # planner step that may call a tool reads the pattern, once.
    asked.clear()
    far = run("which word does the speaker say at the end")
    assert far.plans == [] and asked == [] and not far.rated and far.pattern is None
    assert "Decision pattern" not in far.context
    assert far.guide() == "Decision pattern for descriptive questions: " \
        "descriptive: ask Count first, then answer"
    assert far.guide().startswith("Decision pattern") and asked == [1]
    assert far.rated and far.task_type == "descriptive"
    assert [r.kind for r in far.replayed] == ["pattern"]
    assert store.pattern("descriptive").replays == 1


def _env(settings) -> dict:
    import os

    return {**os.environ, "MEMORYREEL_HOME": str(settings.home),
            "MEMORYREEL_MEMORY_DIR": str(settings.memory_path)}


def test_delete_entry_and_forget_video(ingested, memory_settings):
    video_id = ingested(TUD).video_id
    store = MemoryStore(memory_settings)
    fact = _fact(store, video_id, "how many people are in the first frame?", "Five people.")
    other = _fact(store, video_id, "who walks to the left?", "Person 3 walks to the left.")
    plan = store.add("procedural", {"video_id": video_id, "question": "how many people?",
                                    "text": "Count(how many people) -> Answer", "answer": "5",
                                    "task_type": "descriptive", "workflow": "[]"},
                     store.embed(["how many people?"])[0])
    store.count_replays([store.get(fact), store.get(plan)])

    done = subprocess.run([sys.executable, "-m", "backend", "memory", "delete", fact, "--json"],
                          env=_env(memory_settings), cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [e.id for e in store.list(kind="semantic")] == [other]
    assert fact not in {r.id for r in store.replay_counts()}
    missing = subprocess.run([sys.executable, "-m", "backend", "memory", "show", fact, "--json"],
                             env=_env(memory_settings), cwd=REPO, capture_output=True, text=True)
    assert missing.returncode == 2 and "No memory entry" in json.loads(missing.stdout)["error"]

    assert store.forget_video(video_id) == 1
    assert store.list(kind="semantic") == []
    assert [e.id for e in store.list(kind="procedural")] == [plan]  # inter-task memory stays
    assert {r.id for r in store.replay_counts()} == {plan}


# --- the real model: validation, patterns, follow-up questions ----------------------------------

@pytest.fixture(scope="module")
def llm(library_settings):
    return llm_for(library_settings)


def _ctx(entry, llm) -> ToolContext:
    from backend import config

    return ToolContext(video_id=entry.video_id, db_path=entry.db_path, memory_folder=entry.folder,
                       llm=llm, embed=embedder_for(config.load()).embed, usage=Usage())


def test_validation_keeps_a_right_answer_and_rejects_a_wrong_one(ingested, memory_settings, llm):
    entry = Library(memory_settings.home).get(ingested(TUD).video_id)
    sql = ("SELECT COUNT(DISTINCT instance_id) AS people FROM detections "
           "WHERE frame = (SELECT MIN(frame) FROM detections)")
    people = run_query(entry.db_path, sql, timeout_s=2, max_rows=1).rows[0][0]
    question = "how many people are in the first frame?"
    evidence = [Step(node=1, tool="Count", input=question, times=[0.0], instance_ids=[],
                     observation=f"There are {people} people in the first frame.\nSQL: {sql}\n"
                                 f"people\n{people}")]
    store = MemoryStore(memory_settings)
    ctx = _ctx(entry, llm)
    vector = store.embed([question])[0]

    def answer(text: str) -> Answer:
        return Answer(video_id=entry.video_id, question=question, standalone_question=question,
                      options=None, answer=text, option=None, answered=True, times=[0.0],
                      instance_ids=[], evidence=evidence, tree=[])

    wrong = learning.learn(answer(f"There are {people + 4} people in the first frame."),
                           "descriptive", vector, store, ctx)
    assert wrong.verdict == "invalid", wrong
    assert store.list() == []                      # nothing learned from a wrong answer

    right = learning.learn(answer(f"{people} people."), "descriptive", vector, store, ctx)
    assert right.verdict == "valid", right
    facts = store.list(kind="semantic")
    assert len(facts) == 1 and str(people) in facts[0].text
    assert [w.text for w in store.list(kind="procedural")] == [
        "Count(how many people are in the first frame?) -> Answer"]

    again = learning.learn(answer(f"There are {people} people in the first frame."), "descriptive",
                           store.embed(["How many people are in the first frame?"])[0], store, ctx)
    assert again.merged and again.entry_id == right.entry_id    # a near-duplicate is merged
    assert len(store.list(kind="semantic")) == 1
    assert store.get(right.entry_id).support == 2


def test_decision_pattern_after_the_sixth_workflow(ingested, memory_settings, llm):
    entry = Library(memory_settings.home).get(ingested(TUD).video_id)
    store = MemoryStore(memory_settings)
    ctx = _ctx(entry, llm)
    questions = ["what happens after the first person leaves?", "when does person N appear?",
                 "what happens before N seconds?", "when do the people stop walking?",
                 "which person appears last?", "what happens just after N seconds?",
                 "when is the crowd largest?"]
    refreshed = []
    for i, q in enumerate(questions, start=1):
        tool = "When" if i % 2 else "Recall"
        store.add("procedural", {"video_id": entry.video_id, "question": q,
                                 "text": f"{tool}({q}) -> Answer", "answer": "x",
                                 "task_type": "temporal", "workflow": "[]"}, store.embed([q])[0])
        refreshed.append(learning._refresh_pattern("temporal", store, ctx))
    assert refreshed == [False] * 5 + [True, False]   # after the 6th; next refresh at the 11th
    pattern = store.pattern("temporal")
    assert pattern.n_workflows == 6 and len(pattern.text) > 20
    assert store.pattern("causal") is None


def test_follow_up_question_uses_short_term_memory(ingested, library_settings, llm):
    entry = Library(library_settings.home).get(ingested(TUD).video_id)
    settings = replace(library_settings, n_solutions=1, memory=False)
    first = run_query(entry.db_path, "SELECT COUNT(DISTINCT instance_id) FROM detections "
                                     "WHERE frame = (SELECT MIN(frame) FROM detections)",
                      timeout_s=2, max_rows=1).rows[0][0]
    # "and in the first frame?" means nothing without the turn before it.
    history = [("how many people are in the last frame?", "4 people are in the last frame.")]
    options = [str(n) for n in range(first - 2, first + 3)]
    answer = ask(entry.video_id, "and in the first frame?", settings, options=options,
                 history=history, llm=llm)
    standalone = answer.standalone_question.lower()
    assert "people" in standalone and "first frame" in standalone, standalone
    assert answer.answered and options[answer.option] == str(first), answer.answer
