"""Evaluation harness: annotation layouts, scoring arithmetic, resumable runs, ablations, report.

Runs use a fake `ask` (injected) except the last test, which evaluates two dev questions end to
end with the embedded 0.5B model.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from backend.answer import Cost, Lesson, MemoryTrace, ReplayedEntry
from backend.cli import main
from backend.errors import InputError, NotFoundError
from backend.evaluation import ablation, report, scoring
from backend.evaluation.agent_bench import agent_bench
from backend.evaluation.questions import read_questions, read_video_map, resolve_video
from backend.evaluation.runner import RunConfig, load_results, memory_options, run_eval
from backend.memory.replay import MemoryOptions
from tests.conftest import SHARED, VIDEOS, settings_for
from tests.fakes import fake_answer

DEV_QA = SHARED / "eval" / "dev-qa.csv"


def _write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


# --- annotation layouts ------------------------------------------------------------------------

NEXTQA_HEADER = ["video", "frame_count", "width", "height", "question", "answer", "qid", "type",
                 "a0", "a1", "a2", "a3", "a4"]


def test_reads_nextqa_layout_and_finds_videos_through_the_id_map(tmp_path):
    path = _write_csv(tmp_path / "val.csv", NEXTQA_HEADER, [
        [4010069381, 1267, 640, 480, "why did the boy pick up the ball", 3, 6, "CW",
         "to throw", "to eat", "to clean", "to play with the dog", "to sit"],
        [4010069381, 1267, 640, 480, "what did the dog do after the ball fell", 0, 7, "TN",
         "chase it", "sleep", "bark", "swim", "jump"],
        [2435100235, 900, 320, 240, "how many children are there", 1, 2, "DC",
         "one", "two", "three", "four", "five"],
    ])
    questions = read_questions(path)
    assert [q.key for q in questions] == ["4010069381/6", "4010069381/7", "2435100235/2"]
    first = questions[0]
    assert first.options == ("to throw", "to eat", "to clean", "to play with the dog", "to sit")
    assert (first.answer, first.answer_text, first.type) == (3, "to play with the dog", "CW")
    assert [scoring.group_of(q.type) for q in questions] == ["C", "T", "D"]

    # NExT-QA's map_vid_vidorID.json maps an id to "<folder>/<id>" without an extension.
    videos = tmp_path / "videos"
    (videos / "1106").mkdir(parents=True)
    (videos / "1106" / "4010069381.mp4").write_bytes(b"x")
    (videos / "2435100235.webm").write_bytes(b"x")
    (tmp_path / "map.json").write_text(json.dumps({"4010069381": "1106/4010069381"}))
    names = read_video_map(tmp_path / "map.json")
    assert resolve_video("4010069381", videos, names) == videos / "1106" / "4010069381.mp4"
    assert resolve_video("2435100235", videos, names) == videos / "2435100235.webm"
    _write_csv(tmp_path / "map.csv", ["video_id", "file"], [["4010069381", "1106/4010069381.mp4"]])
    assert resolve_video("4010069381", videos, read_video_map(tmp_path / "map.csv")).is_file()
    with pytest.raises(NotFoundError, match="video-map"):
        resolve_video("999", videos, names)


def test_reads_intentqa_layout_with_extra_columns(tmp_path):
    header = ["video_id", "frame_count", "width", "height", "question", "answer", "qid", "type",
              "a0", "a1", "a2", "a3", "a4", "action", "lemma", "lemma_id"]
    path = _write_csv(tmp_path / "test.csv", header, [
        ["3238737531", 1412, 640, 360, "why did the man in white open the door", 2, 4, "CW",
         "to leave", "to sleep", "to let the girl in", "to cook", "to sing", "open", "open", 12],
        ["3238737531", 1412, 640, 360, "what did the girl do before sitting down", 4, 5, "TP",
         "run", "cry", "laugh", "eat", "take off her coat", "sit", "sit", 40],
    ])
    questions = read_questions(path)
    assert [q.video for q in questions] == ["3238737531", "3238737531"]
    assert [(q.answer, q.answer_text) for q in questions] == [(2, "to let the girl in"),
                                                              (4, "take off her coat")]
    assert [scoring.group_of(q.type) for q in questions] == ["C", "T"]


def test_reads_answers_given_as_option_text(tmp_path):
    # NExT-GQA's files replace the answer index with the right option's text.
    path = _write_csv(tmp_path / "gqa.csv", NEXTQA_HEADER, [
        [10001787725, 900, 640, 480, "why is the baby crying", "Hungry", 1, "CW",
         "tired", "hungry", "cold", "happy", "bored"]])
    assert read_questions(path)[0].answer == 1


def test_reads_msrvtt_qa_json_as_open_ended(tmp_path):
    path = tmp_path / "test_qa.json"
    path.write_text(json.dumps([
        {"answer": "cook", "category_id": 0, "id": 0, "question": "what is a man doing?",
         "video_id": 7010},
        {"answer": "woman", "category_id": 1, "id": 1, "question": "who is singing?",
         "video_id": 7010},
    ]))
    questions = read_questions(path)
    assert [q.key for q in questions] == ["7010/0", "7010/1"]
    assert all(q.options is None and q.answer is None for q in questions)
    assert [(q.answer_text, q.type) for q in questions] == [("cook", "what"), ("woman", "who")]
    (tmp_path / "video7010.mp4").write_bytes(b"x")
    assert resolve_video("7010", tmp_path) == tmp_path / "video7010.mp4"

    jsonl = tmp_path / "qa.jsonl"
    jsonl.write_text(json.dumps({"video": "video7010", "question": "where is he", "answer": "kitchen",
                                 "type": "where", "question_id": "q9"}) + "\n")
    q = read_questions(jsonl)[0]
    assert (q.key, q.type, q.answer_text) == ("video7010/q9", "where", "kitchen")
    assert resolve_video(q.video, tmp_path) == tmp_path / "video7010.mp4"


def test_reads_the_dev_questions_and_their_clips():
    questions = read_questions(DEV_QA)
    assert len(questions) == 14
    assert all(q.options and len(q.options) == 5 and 0 <= q.answer < 5 for q in questions)
    assert all(resolve_video(q.video, VIDEOS).is_file() for q in questions)
    groups = [g["group"] for g in scoring.accuracy_by_group(
        [{"type": q.type, "correct": False} for q in questions])]
    assert groups == ["C", "T", "D", "all"]


@pytest.mark.parametrize("rows, message", [
    ([["v.mp4", "why", 7, 1, "CW", "a", "b", "c", "d", "e"]], "answer 7 but only 5 options"),
    ([["v.mp4", "why", "maybe", 1, "CW", "a", "b", "c", "d", "e"]], "neither an option index"),
    ([["v.mp4", "", 1, 1, "CW", "a", "b", "c", "d", "e"]], "needs a question and a video"),
    ([["v.mp4", "why", 1, 1, "CW", "a", "b", "c", "d", "e"]] * 2, "repeats question"),
])
def test_bad_question_files_say_which_row(tmp_path, rows, message):
    path = _write_csv(tmp_path / "bad.csv", ["video", "question", "answer", "qid", "type",
                                             "a0", "a1", "a2", "a3", "a4"], rows)
    with pytest.raises(InputError, match=message):
        read_questions(path)


# --- scoring -----------------------------------------------------------------------------------

def test_wilson_intervals_match_hand_computed_values():
    low, high = scoring.wilson(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    assert scoring.wilson(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))
    # All right: the lower bound is n / (n + z^2), not 1.
    assert scoring.wilson(14, 14) == (pytest.approx(14 / (14 + scoring.Z95 ** 2)), 1.0)


def test_groups_count_errors_and_unanswered_as_wrong():
    def rec(kind, correct, error=None, calls=10):
        return {"type": kind, "correct": correct, "error": error, "answered": correct,
                "truth": 0, "llm_calls": calls, "prompt_tokens": 100, "completion_tokens": 10,
                "seconds": 5.0}
    records = [rec("CW", True), rec("CH", False), rec("TN", True), rec("TC", True),
               rec("TP", False, error="RuntimeError: boom", calls=0), rec("DC", True),
               rec("DL", False), rec("DO", False), rec("what", True)]
    rows = {r["group"]: r for r in scoring.accuracy_by_group(records)}
    assert list(rows) == ["C", "T", "D", "what", "all"]
    assert [(rows[g]["correct"], rows[g]["n"]) for g in rows] == [(1, 2), (2, 3), (1, 3), (1, 1),
                                                                  (5, 9)]
    assert rows["T"]["errors"] == 1 and rows["all"]["accuracy"] == round(5 / 9, 4)
    assert rows["all"]["ci_low"] == round(scoring.wilson(5, 9)[0], 4)
    # Cost is the mean over the 8 questions without an error.
    assert scoring.cost_per_answer(records)["llm_calls"] == 10.0
    summary = scoring.summarize(records)
    assert (summary["questions"], summary["errors"], summary["unanswered"]) == (9, 1, 4)


def test_answer_time_is_what_a_user_waits_for_at_p50_and_p90():
    # Twenty answers shown after 1..20 s, learning after each (10 s) not counted; one error.
    shape = {"type": "CW", "correct": True, "answered": True, "truth": 0}
    records = [{**shape, "answer_seconds": float(s), "learn_seconds": 10.0, "seconds": s + 10.0,
                "error": None} for s in range(1, 21)]
    records.append({**shape, "answer_seconds": 99.0, "error": "RuntimeError: boom"})
    assert scoring.answer_time(records) == {"n": 20, "p50": 10.0, "p90": 18.0, "max": 20.0}
    # A run from before answer_seconds was kept: the LLM's and the other seconds.
    assert scoring.answer_time([{"llm_seconds": 3.0, "other_seconds": 0.5, "seconds": 9.0,
                                 "error": None}])["p50"] == 3.5
    assert scoring.answer_time(records[-1:]) is None
    summary = {**scoring.summarize(records[:20]), "chart": None}
    assert "p50 10.0 s, p90 18.0 s, max 20.0 s over 20 answers" in report.text_summary(summary)


def test_accuracy_is_given_per_stated_confidence_and_high_precision_on_its_own_line(tmp_path):
    from backend.evaluation import report

    def rec(level, correct):
        return {"type": "TC", "correct": correct, "error": None, "answered": True, "truth": 0,
                "confidence": level}
    records = [rec("high", True), rec("high", True), rec("high", False), rec("medium", True),
               rec("low", False), rec("low", False), {**rec(None, True), "confidence": None}]
    stated = scoring.summarize(records)["by_confidence"]
    assert stated["levels"] == {"high": {"right": 2, "of": 3}, "medium": {"right": 1, "of": 1},
                                "low": {"right": 0, "of": 2}}
    assert stated["high_precision"] == round(2 / 3, 3)
    lines = report.confidence_lines({"by_confidence": stated})
    assert lines[0] == "High-confidence precision: 2/3 (67%)"
    assert lines[1] == "Accuracy by stated confidence: high 2/3, medium 1/1, low 0/2"
    chart = report.write_reliability_chart({"by_confidence": stated}, tmp_path)
    assert "high (2" in (tmp_path / "reliability.html").read_text() and chart["html"]


def test_open_ended_answers_match_after_normalising():
    assert scoring.open_ended_match("The cat.", "cat") == (True, True)
    assert scoring.open_ended_match("A man is cooking", "cooking") == (False, True)
    assert scoring.open_ended_match("cooks", "cook") == (False, False)


def test_memory_and_replay_flags_map_to_memory_options():
    assert memory_options("off", "fixed:3,2") == MemoryOptions.off()
    assert memory_options("semantic") == MemoryOptions(semantic=True, procedural=False, learn=True)
    assert memory_options("procedural", "fixed:1,1") == MemoryOptions(
        semantic=False, procedural=True, learn=True, fixed_k=(1, 1))
    assert memory_options("all", "fixed:5,5").fixed_k == (5, 5)
    with pytest.raises(InputError, match="fixed:KS,KP"):
        memory_options("all", "fixed:3")


# --- runs with a fake agent ----------------------------------------------------------------------

class FakeAgent:
    """Answers option (qid mod 5), learns with 1 call; raises for chosen questions or after k calls."""

    def __init__(self, fail_on=(), interrupt_after=None):
        self.calls = []
        self.fail_on = set(fail_on)
        self.interrupt_after = interrupt_after

    def __call__(self, video_id, question, settings, *, options, n_solutions, memory, learn_now):
        if self.interrupt_after is not None and len(self.calls) == self.interrupt_after:
            raise KeyboardInterrupt
        self.calls.append({"question": question, "n": n_solutions, "memory": memory,
                           "memory_dir": settings.memory_dir, "settings": settings})
        if question in self.fail_on:
            raise RuntimeError("the LLM server went away")
        option = len(question) % len(options)
        return fake_answer(
            question, options, option, tree=[{"id": 0}, {"id": 1}, {"id": 2}],
            usage=Cost(llm_calls=4, prompt_tokens=1000, completion_tokens=50, llm_seconds=2.0,
                       other_seconds=0.5, cached_tokens=600, prompt_seconds=1.2),
            memory=MemoryTrace(enabled=True, k_s=2, k_p=1, complexity=0.3,
                               replayed=[_replayed("semantic"), _replayed("procedural")],
                               learned=Lesson(verdict="valid", reason="", usage=Cost(
                                   llm_calls=1, prompt_tokens=300, completion_tokens=20,
                                   llm_seconds=0.7))))


def _replayed(kind: str) -> ReplayedEntry:
    return ReplayedEntry(id=kind, kind=kind, text="", question="", similarity=0.9,
                         video_id="v", times=[], answer="")


def _ingest(path, settings):
    return f"id-{path.stem}"


def _run(out, agent, **kwargs):
    settings = settings_for(out.parent / "home")
    kwargs.setdefault("config", RunConfig(memory="all", n_solutions=2))
    return run_eval(DEV_QA, VIDEOS, out, settings, ask_fn=agent, ingest_fn=_ingest, chart=False,
                    **kwargs)


def test_a_run_writes_one_record_per_question_in_seeded_order(tmp_path):
    agent = FakeAgent()
    summary = _run(tmp_path / "a", agent)
    records = load_results(tmp_path / "a" / "results.jsonl")
    assert len(records) == 14 and summary["groups"][-1]["n"] == 14
    by_key = {q.key: q for q in read_questions(DEV_QA)}
    for r in records:
        q = by_key[r["key"]]
        assert r["truth"] == q.answer and r["correct"] == (r["predicted"] == q.answer)
        assert r["predicted"] == len(q.question) % 5
        assert (r["tree_size"], r["replayed"], r["replayed_kinds"]) == (
            3, 2, {"semantic": 1, "procedural": 1})
        assert (r["learn_llm_calls"], r["learn_prompt_tokens"], r["learn_verdict"]) == (
            1, 300, "valid")
        assert (r["cached_tokens"], r["prompt_seconds"]) == (600, 1.2)
        assert r["seconds"] == round(r["answer_seconds"] + r["learn_seconds"], 2)
    right = sum(r["correct"] for r in records)
    assert summary["groups"][-1]["correct"] == right
    assert summary["cost_per_answer"]["llm_calls"] == 4.0
    assert all(c["memory_dir"] == str(tmp_path / "a" / "memory") for c in agent.calls)
    assert all(c["memory"] == MemoryOptions() and c["n"] == 2 for c in agent.calls)

    order = [r["key"] for r in records]
    _run(tmp_path / "b", FakeAgent())
    assert [r["key"] for r in load_results(tmp_path / "b" / "results.jsonl")] == order
    _run(tmp_path / "c", FakeAgent(), config=RunConfig(seed=1, limit=5))
    other = [r["key"] for r in load_results(tmp_path / "c" / "results.jsonl")]
    assert len(other) == 5 and other != order[:5]


def test_resume_finishes_an_interrupted_run_without_redoing_questions(tmp_path):
    out = tmp_path / "run"
    (out / "memory").mkdir(parents=True)
    (out / "memory" / "stale").write_text("from an earlier run")
    with pytest.raises(KeyboardInterrupt):
        _run(out, FakeAgent(interrupt_after=5))
    assert not (out / "memory" / "stale").exists(), "a fresh run starts with empty memory"
    first = load_results(out / "results.jsonl")
    assert len(first) == 5
    # A write cut off mid-line by the interruption is dropped, and that question asked again.
    with open(out / "results.jsonl", "a") as f:
        f.write('{"key": "half a line')
    (out / "memory").mkdir()
    (out / "memory" / "learned").write_text("what the first part learned")

    with pytest.raises(InputError, match="--resume"):
        _run(out, FakeAgent())
    with pytest.raises(InputError, match="same file and options"):
        _run(out, FakeAgent(), resume=True, config=RunConfig(memory="off", n_solutions=2))

    agent = FakeAgent()
    summary = _run(out, agent, resume=True)
    records = load_results(out / "results.jsonl")
    keys = [r["key"] for r in records]
    assert len(agent.calls) == 9 and len(keys) == 14 == len(set(keys))
    assert {c["question"] for c in agent.calls}.isdisjoint(r["question"] for r in first)
    assert (out / "memory" / "learned").exists(), "resume keeps the memory built so far"
    assert summary["questions"] == 14
    assert len(json.loads((out / "run.json").read_text())["resumed"]) == 1


def test_errors_are_recorded_and_counted_wrong(tmp_path):
    questions = read_questions(DEV_QA)
    failing = {questions[0].question, questions[5].question}
    summary = _run(tmp_path / "run", FakeAgent(fail_on=failing))
    records = load_results(tmp_path / "run" / "results.jsonl")
    errors = [r for r in records if r["error"]]
    assert len(records) == 14 and len(errors) == 2
    assert all(r["error"] == "RuntimeError: the LLM server went away" and not r["correct"]
               for r in errors)
    assert summary["errors"] == 2
    assert summary["groups"][-1]["correct"] == sum(r["correct"] for r in records)

    def broken_ingest(path, settings):
        if path.name.startswith("intel_car"):
            raise InputError("codec not supported")
        return path.stem
    run_eval(DEV_QA, VIDEOS, tmp_path / "ingest", settings_for(tmp_path / "home"),
             RunConfig(), ask_fn=FakeAgent(), ingest_fn=broken_ingest, chart=False)
    failed = [r for r in load_results(tmp_path / "ingest" / "results.jsonl") if r["error"]]
    assert len(failed) == 3 and all("codec not supported" in r["error"] for r in failed)


def test_ablation_varies_one_factor_at_a_time(tmp_path):
    agent = FakeAgent()
    result = ablation.run_ablation(
        DEV_QA, VIDEOS, tmp_path / "abl", settings_for(tmp_path / "home"),
        RunConfig(limit=2), ask_fn=agent, ingest_fn=_ingest)
    rows = result["rows"]
    assert [(r["factor"], r["setting"]) for r in rows] == [
        ("memory", "none"), ("memory", "semantic"), ("memory", "procedural"), ("memory", "both"),
        ("planner", "N = 1"), ("planner", "N = 2"), ("planner", "N = 4"),
        ("replay", "dynamic"), ("replay", "fixed (1,1)"), ("replay", "fixed (3,2)"),
        ("replay", "fixed (5,5)")]
    assert [r["default"] for r in rows].count(True) == 3
    # 11 rows, 9 distinct configurations, 2 questions each.
    assert len(agent.calls) == 18
    seen = {(c["memory"], c["n"]) for c in agent.calls}
    assert (MemoryOptions.off(), 2) in seen and (MemoryOptions(), 4) in seen
    assert (MemoryOptions(fixed_k=(3, 2)), 2) in seen
    assert result["table"].count("\n") == 12 and (tmp_path / "abl" / "ablation.md").is_file()


def test_bench_agent_asks_every_agent_apart_and_records_a_failed_ingest(tmp_path, monkeypatch):
    import backend.ingest.pipeline

    def ingest(path, settings):
        if path.name.startswith("intel_car"):
            raise InputError("codec not supported")
        return SimpleNamespace(video_id=f"id-{path.stem}")
    monkeypatch.setattr(backend.ingest.pipeline, "ingest", ingest)
    agent, lines = FakeAgent(), []
    result = agent_bench(DEV_QA, VIDEOS, settings_for(tmp_path / "home"), ask_fn=agent,
                         progress=lines.append)
    assert result["agents"] == ["grounded", "sql"] and result["questions"] == 14
    assert len(agent.calls) == 2 * 11, "the 3 questions on the failed video are not asked"
    assert len({c["memory_dir"] for c in agent.calls}) == 2, "each agent has its own memory"
    truth = {(q.video, q.qid): q.answer for q in read_questions(DEV_QA)}
    for run in result["runs"].values():
        failed = [r for r in run["results"] if r["video"].startswith("intel_car")]
        assert len(failed) == 3 and all(
            r["predicted"] is None and not r["correct"] and r["llm_calls"] == 0
            and "codec not supported" in r["answer"] for r in failed)
        right = sum(r["predicted"] == truth[(r["video"], r["qid"])] for r in run["results"])
        summary = run["summary"]
        assert (summary["questions"], summary["correct"]) == (14, right)
        assert summary["llm_calls_mean"] == round(4 * 11 / 14, 2)
        assert summary["learning_seconds_mean"] == round(0.7 * 11 / 14, 2)
    assert sum("ERROR RuntimeError: ingest failed: InputError: codec not supported" in line
               for line in lines) == 6


def test_bench_agent_runs_a_workload_half_under_each_variant_side_by_side(tmp_path, monkeypatch):
    import backend.ingest.pipeline

    homes = []

    def ingest(path, settings):
        homes.append(settings.home)
        return SimpleNamespace(video_id=f"id-{path.stem}")
    monkeypatch.setattr(backend.ingest.pipeline, "ingest", ingest)
    workload = tmp_path / "workload.csv"
    with open(DEV_QA, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with open(workload, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, [*rows[0], "need", "half"])
        writer.writeheader()
        for i, row in enumerate(rows):
            writer.writerow({**row, "need": "count_at" if i % 3 else "direction",
                             "half": "report" if i % 2 else "tune"})
    agent = FakeAgent()
    home = tmp_path / "home"
    result = agent_bench(workload, VIDEOS, settings_for(home), ask_fn=agent, agents=("grounded",),
                         progress=lambda line: None, half="report",
                         variants=[{}, {"MEMORYREEL_ANSWER_CHECKS": "0",
                                        "MEMORYREEL_DETECTOR_MAX_IMGSZ": "640"}])
    assert result["half"] == "report" and result["questions"] == 7, "only the reporting half"
    assert result["agents"] == ["grounded", "grounded ANSWER_CHECKS=0 DETECTOR_MAX_IMGSZ=640"]
    asked = [c["settings"] for c in agent.calls]
    assert [s.answer_checks for s in asked] == [True] * 7 + [False] * 7
    assert {s.detector_max_imgsz for s in asked[7:]} == {640}
    # Each variant ingests into a fresh library of its own: its detector may see the videos
    # otherwise, and the user's library may hold them as older code ingested them.
    first, second = set(homes[:len(homes) // 2]), set(homes[len(homes) // 2:])
    assert len(first) == len(second) == 1 and first != second and home not in first | second
    for run in result["runs"].values():
        by_need = run["summary"]["accuracy_by_need"]
        assert set(by_need) == {"count_at", "direction"}
        assert sum(int(v.split("/")[1]) for v in by_need.values()) == 7
    # The figures as a section for docs/EVALUATION.md, re-made from the kept JSON.
    kept, section = tmp_path / "run.json", tmp_path / "section.md"
    kept.write_text(json.dumps(result))
    assert main(["bench", "agent", "--from-json", str(kept), "--markdown", str(section),
                 "--json"]) == 0
    table = section.read_text()
    assert "the report half" in table and "| high-confidence precision |" in table
    assert "`grounded ANSWER_CHECKS=0 DETECTOR_MAX_IMGSZ=640`" in table
    assert table.count("| right: ") == 2


def test_vary_runs_each_value_alone_or_settings_joined_by_a_semicolon_together():
    from backend.cli.bench import _variants
    from backend.errors import UsageError

    assert _variants(["ANSWER_CHECKS=0;MEMORYREEL_DETECTOR_MAX_IMGSZ=640", "TRACK_FPS=4,6"]) == [
        {}, {"MEMORYREEL_ANSWER_CHECKS": "0", "MEMORYREEL_DETECTOR_MAX_IMGSZ": "640"},
        {"MEMORYREEL_TRACK_FPS": "4"}, {"MEMORYREEL_TRACK_FPS": "6"}]
    with pytest.raises(UsageError, match="one value each"):
        _variants(["ANSWER_CHECKS=0,1;TRACK_FPS=4"])
    with pytest.raises(UsageError, match="MemoryReel setting"):
        _variants(["NO_SUCH=1;TRACK_FPS=4"])


def test_ingest_vary_gives_settings_joined_by_commas_each_value_together():
    from backend.cli.bench import _settings_values
    from backend.errors import UsageError

    assert _settings_values("PLACES,MEMORYREEL_ACTIVITIES=0,1") == (
        ["MEMORYREEL_PLACES", "MEMORYREEL_ACTIVITIES"], ["0", "1"])
    assert _settings_values("PEOPLE_CHANGE=0,4") == (["MEMORYREEL_PEOPLE_CHANGE"], ["0", "4"])
    with pytest.raises(UsageError, match="MemoryReel setting"):
        _settings_values("PLACES,NO_SUCH=0,1")


def test_report_is_regenerated_from_the_jsonl(tmp_path):
    out = tmp_path / "run"
    _run(out, FakeAgent(fail_on={read_questions(DEV_QA)[2].question}))
    (out / "notes.md").write_text("Hand-written remarks stay with the run.")
    doc = tmp_path / "EVALUATION.md"
    assert main(["eval-report", str(out), "--output", str(doc), "--json"]) == 0
    text = doc.read_text()
    records = load_results(out / "results.jsonl")
    right = sum(r["correct"] for r in records)
    assert f"| all | 14 | {right} | {100 * right / 14:.1f} |" in text
    assert "RuntimeError: the LLM server went away" in text
    assert "Hand-written remarks stay with the run." in text
    assert f"eval-report {out} --output {doc}" in text


# --- end to end with the real model ------------------------------------------------------------

def test_evaluates_two_dev_questions_with_the_embedded_model(tmp_path, monkeypatch, capsys):
    with open(DEV_QA, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["video"] == "mot15_TUD-Campus.mp4"]
    assert len(rows) == 2
    questions = _write_csv(tmp_path / "two.csv", list(rows[0]), [list(r.values()) for r in rows])
    monkeypatch.setenv("MEMORYREEL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMORYREEL_LLM_SIZE", "0.5b")
    out = tmp_path / "run"

    # N = 1 (one ReAct chain) keeps this to a few LLM calls per question.
    assert main(["eval", str(questions), "--videos", str(VIDEOS), "--out", str(out), "--n", "1",
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    records = load_results(out / "results.jsonl")
    assert len(records) == 2 and summary["groups"][-1]["n"] == 2
    for r in records:
        assert r["error"] is None, r["error"]
        # The small model may fail to answer; that is recorded as such and counted wrong.
        if r["answered"]:
            assert r["predicted"] in range(5), r["predicted_text"]
            assert r["learn_verdict"] in ("valid", "invalid")
        else:
            assert r["predicted"] is None and r["predicted_text"].startswith("could not answer")
            assert r["learn_verdict"] == "skipped"
        assert r["correct"] == (r["predicted"] == r["truth"])
        assert r["tree_size"] >= 2
        # The embedded server says how much of each prompt its cache held and how long it read.
        assert 0 <= r["cached_tokens"] <= r["prompt_tokens"]
        assert 0 <= r["prompt_seconds"] <= r["llm_seconds"]
        assert 0 < r["answer_seconds"] <= r["seconds"]
    # Both are routed to code by their words (the count in the first frame, the walking
    # direction); each record keeps the path its answer took, and a miss its failure class.
    direction = next(r for r in records if "which way" in r["question"])
    assert direction["path"][0]["operation"] == "movement" and direction["path"][0]["value"]
    for r in records:
        assert (r["failure"] is None) == r["correct"], r
        assert r["correct"] or r["failure"] in ("perception", "reading", "routing", "budget")
    assert summary["groups"][-1]["correct"] == sum(r["correct"] for r in records)
    if any(r["llm_calls"] for r in records):  # the first call reads the system prompt anew
        assert sum(r["prompt_seconds"] for r in records) > 0
    assert summary["answer_time"]["n"] == 2
    assert summary["unanswered"] == sum(not r["answered"] for r in records)
    assert summary["run"]["model"].startswith("Qwen2.5-Coder-0.5B")
    assert (out / "memory").is_dir(), "the run learns into its own memory folder"
    assert Path(summary["chart"]["html"]).stat().st_size > 0
    if shutil.which("chromium") or shutil.which("google-chrome") or os.environ.get("BROWSER_PATH"):
        assert Path(summary["chart"]["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "BROWSER_PATH" in summary["chart"]["png_error"]
