"""What a replayed entry may save (issue 15), with a scripted LLM over the real TUD-Campus tables:
a workflow's typed query re-run on a new question's own time, facts that cannot leak across
times, verdicts by computation, and learning only what is replayed."""

from __future__ import annotations

import json
from dataclasses import replace

import lancedb
import pyarrow as pa
import pytest

from backend.agent import queries
from backend.answer import Answer, MemoryTrace, Step
from backend.ask import ask
from backend.agent.tools import ToolContext
from backend.library import Library
from backend.memory import learn as learning
from backend.memory import reuse
from backend.memory.replay import MemoryOptions
from backend.memory.reuse import Asked, asked_of
from backend.memory.store import MemoryStore
from backend.memory_records import EntryRef
from models.llm import Usage
from tests.fakes import ScriptedLLM, step

TUD = "mot15_TUD-Campus.mp4"
IN_VIEW = {"operation": "in_view", "target": "people", "time": "", "until": "", "words": ""}


@pytest.fixture
def video(ingested, library_settings, tmp_path):
    """(library entry, settings with a fresh memory folder, people in view at 0.5 s, a later
    time at which the count differs, people in view then)."""
    entry = Library(library_settings.home).get(ingested(TUD).video_id)
    settings = replace(library_settings, memory_dir=str(tmp_path / "memory"), n_solutions=2,
                       memory=True)
    tables = queries.VideoTables(entry.db_path)

    def count(t: float) -> int:
        query = queries.TypedQuery(**{**IN_VIEW, "time": f"{t} s"})
        return int(queries.run(query, f"how many people at {t} s", tables).value)
    # The later time is looked for, not fixed: each count rests on the detector, and one box
    # rounded differently on another CPU can make the counts at two fixed times equal.
    at_half = count(0.5)
    later = next((t for t in (1.5, 1.0, 2.0, 2.5) if count(t) != at_half), None)
    assert later is not None, "the tests need two times with different counts"
    return entry, settings, at_half, later, count(later)


def _options(*counts: int) -> list[str]:
    """Five count options holding every given count once."""
    wanted = list(dict.fromkeys(counts))
    extra = [n for n in range(0, 20) if n not in wanted]
    return [str(n) for n in sorted(wanted + extra[: 5 - len(wanted)])]


def _calls(answer: Answer) -> int:
    learned = answer.memory.learned
    return answer.usage.llm_calls + (learned.usage.llm_calls if learned and learned.usage else 0)


def test_a_paraphrase_at_another_time_is_answered_by_the_replayed_workflow(video):
    entry, settings, at_half, later, at_later = video
    options = _options(at_half, at_later)
    first_llm = ScriptedLLM([step("Count", "count the people in view at 0.5 s"),
                             {**IN_VIEW, "time": "0.5 s"},
                             {"task_type": "descriptive", "complexity": 0.2}])
    # The router would count this by code before the model plans; off, the model plans it, so
    # there is a workflow of its making to learn.
    first = ask(entry.video_id, "count the people in view at 0.5 s",
                replace(settings, answer_checks=False), options=options, llm=first_llm)
    assert options[first.option] == str(at_half)
    assert first.memory.learned.verdict == "valid" and first.memory.decided_by is None
    assert first.memory.learned.usage.llm_calls == 1  # the task type; no validator
    assert first_llm.replies == []

    second_llm = ScriptedLLM([])  # any LLM call would fail the test: none is scripted
    second = ask(entry.video_id, f"how many people are in view at {later} s", settings,
                 options=options, llm=second_llm)
    # The count at the later time from the tables, not the fact about 0.5 s.
    assert options[second.option] == str(at_later)
    assert _calls(second) == 0 < _calls(first)
    assert second.memory.decided_by.kind == "procedural"
    assert [r.kind for r in second.memory.replayed] == ["procedural"]  # no 0.5 s fact
    replayed_step = second.evidence[0]
    assert replayed_step.replayed == second.memory.decided_by
    assert "SELECT" in replayed_step.sql and replayed_step.query["span"] == [later, later]
    assert "decided it" in second.tree[-1]["thought"]
    # Nothing new to learn from the workflow: only the later time's fact, at no LLM call.
    store = MemoryStore(settings)
    assert len(store.list(kind="procedural")) == 1
    facts = store.list(kind="semantic")
    assert sorted(Asked.from_json(f.asked).span for f in facts) == [(0.5, 0.5), (later, later)]

    # The 0.5 s need again, in other words: its fact is checked by its query and decides.
    third = ask(entry.video_id, "at 0.5 s, how many people can be seen", settings,
                options=options, llm=ScriptedLLM([]))
    assert options[third.option] == str(at_half) and _calls(third) == 0
    fact = next(f for f in facts if Asked.from_json(f.asked).span == (0.5, 0.5))
    assert third.memory.decided_by == EntryRef(fact.id, "semantic")
    assert store.get(fact.id).support == 2 and len(store.list(kind="semantic")) == 2


def test_a_reading_is_replayed_whatever_the_question_calls_the_one_it_is_about(video):
    """Speech, text on screen and the timeline are read whoever the question names: a 'speaker'
    is a person, and a stored speech query without a target had not been replayed for the very
    question it was learned from (which then stored a copy of its workflow on every asking)."""
    entry = video[0]
    tables = queries.VideoTables(entry.db_path)
    stored = {"operation": "timeline", "target": "", "words": "", "timed": True}
    ran = reuse.rerun(stored, "what is seen around the man at 1.0 s", tables)
    assert ran is not None and ran[0].support != "none" and ran[1].operation == "timeline"
    # A count still keeps to the kind it counted: people named, no target stored, no replay.
    count = {"operation": "in_view", "target": "", "words": "", "timed": True}
    assert reuse.rerun(count, "how many people are in view at 1.0 s", tables) is None


def test_a_fact_the_tables_contradict_is_dropped_before_the_planner_reads_it(video):
    entry, settings, at_half, *_ = video
    store = MemoryStore(settings)
    question = "how many people are in view at 0.5 s"
    wrong = store.add("semantic", {
        "video_id": entry.video_id, "question": question, "text": f"{at_half + 7} people.",
        "answer": str(at_half + 7), "times": [0.5], "verdict": "checked", "support": 1,
        "asked": asked_of(question, 100.0).to_json(),
        "query": json.dumps({"operation": "in_view", "target": "people", "words": "",
                             "timed": True, "tool": "Count", "value": str(at_half + 7)})},
        store.embed([question])[0])
    options = _options(at_half, at_half + 7)
    llm = ScriptedLLM([step("Count", question), {**IN_VIEW, "time": "0.5 s"},
                       {"task_type": "descriptive", "complexity": 0.2}])
    answer = ask(entry.video_id, "count the people in view at 0.5 s", settings, options=options,
                 llm=llm)
    assert answer.memory.contradicted == [wrong]
    assert answer.memory.replayed == [] and f"{at_half + 7} people" not in llm.prompts[0]
    assert options[answer.option] == str(at_half)


def test_a_fact_about_one_time_is_not_replayed_for_another(video):
    entry, settings, _, later, at_later = video
    store = MemoryStore(settings)
    question = "how many people are in view at 0.5 s"
    store.add("semantic", {"video_id": entry.video_id, "question": question, "text": "3 people.",
                           "answer": "3", "times": [0.5], "verdict": "checked", "support": 1,
                           "asked": asked_of(question, 100.0).to_json(), "query": ""},
              store.embed([question])[0])
    # No option is the count the tables give, so the planner answers and is validated.
    options = [str(n) for n in range(20) if n != at_later][:5]
    replies = [step("Count", "x"), {**IN_VIEW, "time": f"{later} s"}, step("Answer", options[0]),
               _valid(), {"task_type": "descriptive", "complexity": 0.2}]
    other_time = ask(entry.video_id, f"how many people are in view at {later} s", settings,
                     options=options, llm=ScriptedLLM(replies))
    assert other_time.memory.replayed == []
    same = ask(entry.video_id, "how many people are in view at 0.5 s?", settings,
               options=["3", "4"], llm=ScriptedLLM([step("Answer", "3"), _valid()]))
    assert "semantic" in [r.kind for r in same.memory.replayed]


def _valid() -> dict:
    return {"reason": "the evidence says so", "valid": True, "summary": "A fact."}


def _answer(entry, option: int, value: str, options: list[str]) -> Answer:
    question = "how many people are in view at 0.5 s"
    evidence = [Step(node=1, tool="Count", input=question, times=[0.5], instance_ids=[],
                     observation=f"{value} people are in view at 0.5 s.", sql="SELECT 1",
                     value=value, support="computed", query={**IN_VIEW, "span": [0.5, 0.5]})]
    return Answer(video_id=entry.video_id, question=question, standalone_question=question,
                  options=options, answer=options[option], option=option, answered=True,
                  times=[0.5], instance_ids=[], evidence=evidence, tree=[],
                  memory=MemoryTrace(asked=asked_of(question, 100.0).to_json()))


def _ctx(entry, llm) -> ToolContext:
    return ToolContext(video_id=entry.video_id, db_path=entry.db_path, memory_folder=entry.folder,
                       llm=llm, embed=None, usage=Usage())


def test_an_answer_the_computed_value_contradicts_is_not_stored(video):
    entry, settings, *_ = video
    store = MemoryStore(settings)
    llm = ScriptedLLM([])
    answer = _answer(entry, option=0, value="4", options=["3", "4", "5"])
    lesson = learning.learn(answer, "descriptive", store.embed([answer.question])[0], store,
                            _ctx(entry, llm))
    assert lesson.verdict == "invalid" and "'4'" in lesson.reason
    assert store.list() == [] and llm.prompts == []


def test_semantic_only_learning_writes_no_workflow_and_procedural_only_no_fact(video):
    entry, settings, *_ = video
    store = MemoryStore(settings)
    answer = _answer(entry, option=1, value="4", options=["3", "4", "5"])
    vector = store.embed([answer.question])[0]
    lesson = learning.learn(answer, None, vector, store, _ctx(entry, ScriptedLLM([])),
                            MemoryOptions(procedural=False))
    assert lesson.verdict == "valid" and lesson.workflow_id is None
    assert len(store.list(kind="semantic")) == 1 and store.list(kind="procedural") == []
    llm = ScriptedLLM([{"task_type": "descriptive", "complexity": 0.1}])
    lesson = learning.learn(answer, None, vector, store, _ctx(entry, llm),
                            MemoryOptions(semantic=False))
    assert lesson.entry_id is None and lesson.workflow_id
    assert len(store.list(kind="semantic")) == 1 and len(llm.prompts) == 1
    workflow = store.get(lesson.workflow_id).workflow
    assert workflow[0]["query"] == {"operation": "in_view", "target": "people", "words": "",
                                    "timed": True}


def test_a_memory_folder_from_before_gains_the_new_columns(video):
    entry, settings, *_ = video
    store = MemoryStore(settings)
    vector = store.embed(["how many people at the start"])[0]
    old = pa.schema([pa.field(n, pa.string()) for n in ("id", "video_id", "question", "text",
                                                         "created_at", "updated_at", "answer")]
                    + [pa.field("times", pa.list_(pa.float64())), pa.field("verdict", pa.string()),
                       pa.field("support", pa.int64()),
                       pa.field("vector", pa.list_(pa.float32(), len(vector)))])
    db = lancedb.connect(str(settings.memory_path / "memory.lance"))
    db.create_table("semantic", schema=old).add([{
        "id": "sem-old", "video_id": entry.video_id, "question": "how many people at the start",
        "text": "5 people.", "created_at": "", "updated_at": "", "answer": "5", "times": [0.0],
        "verdict": "checked", "support": 1, "vector": vector}])
    assert store.get("sem-old").asked == ""                    # old rows load as they are
    # ... and their time is read again from their question when replay needs it.
    assert asked_of("how many people at 2 s", 100.0).span == (2.0, 2.0)
    store.add("semantic", {"video_id": entry.video_id, "question": "q", "text": "t", "answer": "a",
                           "times": [], "verdict": "v", "support": 1,
                           "asked": Asked().to_json(), "query": ""}, vector)
    assert {e.id: e.asked for e in store.list(kind="semantic")}["sem-old"] == ""


def test_a_question_s_own_words_outrank_a_similar_question_s_workflow(video):
    entry, settings, *_ = video
    distinct = {"operation": "count_distinct", "target": "people", "time": "", "until": "",
                "words": ""}
    tables = queries.VideoTables(entry.db_path)
    people = queries.run(queries.TypedQuery(**distinct), "how many people", tables).value
    first_llm = ScriptedLLM([step("Count", "how many people show up in the clip"), distinct,
                             {"task_type": "descriptive", "complexity": 0.2}])
    ask(entry.video_id, "how many people show up in the clip", replace(settings, answer_checks=False),
        options=_options(int(people)), llm=first_llm)

    # Worded alike, but asking a time: the count it would replay ("8") is no answer to it.
    arrival = queries.run(queries.TypedQuery(**{**distinct, "operation": "first_appearance"}),
                          "when does the last person show up", tables).value
    times = ["0.0 s", arrival, "2.8 s"]
    second = ask(entry.video_id, "how many seconds into the clip does the last person show up",
                 settings, options=times, llm=ScriptedLLM([{"task_type": "temporal",
                                                             "complexity": 0.3}]))
    assert "procedural" in [r.kind for r in second.memory.replayed], "the count was recalled"
    assert second.evidence[0].query["operation"] == "first_appearance"
    assert second.answer == arrival and second.memory.decided_by is None
