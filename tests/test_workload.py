"""The question workload and `bench memory` over it.

The workload's external answers are recomputed here from gt.txt in a few lines of their own, at
the time each question names; table questions are checked by the agent's own typed queries on
a small hand-made database. `bench memory`'s figures come from a scripted stand-in for `ask`.
"""

from __future__ import annotations

import configparser
import json
import re
import shutil
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlite_utils

from backend import cli, schema
from backend.agent.options import option_for_value
from backend.agent.queries import TypedQuery, VideoTables, run
from backend.agent.timephrases import resolve
from backend.evaluation import questions, tracking, workload
from backend.answer import Confidence, Cost, Lesson, MemoryTrace, ReplayedEntry
from backend.evaluation import memory_bench as bench
from backend.memory_records import EntryRef
from tests.conftest import VIDEOS, clip
from tests.fakes import fake_answer

TUD = ["mot15_TUD-Campus.mp4", "mot15_TUD-Stadtmitte.mp4"]


@pytest.fixture(scope="module")
def tud_folder(tmp_path_factory) -> Path:
    """The two TUD clips with their ground truth, as a folder of its own."""
    folder = tmp_path_factory.mktemp("tud")
    for name in TUD:
        (folder / name).symlink_to(clip(name))
    shutil.copytree(VIDEOS / "ground-truth", folder / "ground-truth")
    return folder


def _make(folder: Path, settings, seed: int, out: Path, count: int = 120) -> bytes:
    workload.make_workload(folder, out, settings, count=count, seed=seed)
    return out.read_bytes()


@pytest.fixture(scope="module")
def tud_workload(tud_folder, tmp_path_factory, library_settings) -> Path:
    out = tmp_path_factory.mktemp("workload") / "tud.csv"
    _make(tud_folder, library_settings, 0, out)
    return out


def _rows(path: Path) -> list[dict]:
    import csv
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _truth(name: str) -> tuple[dict[int, list[tuple[int, float, float]]], float, int]:
    """frame (from 1) -> [(id, box centre x, box width)], fps, frames; rows of conf 0 left out."""
    folder = VIDEOS / "ground-truth" / name.removeprefix("mot15_").removesuffix(".mp4")
    info = configparser.ConfigParser()
    info.read(folder / "seqinfo.ini")
    frames: dict[int, list] = defaultdict(list)
    for line in (folder / "gt.txt").read_text().splitlines():
        f, i, x, y, w, h, conf = (float(c) for c in line.split(",")[:7])
        if conf != 0:
            frames[int(f)].append((int(i), x + w / 2, w))
    return frames, info.getfloat("Sequence", "frameRate"), info.getint("Sequence", "seqLength")


def test_every_external_answer_is_what_the_ground_truth_says(tud_workload):
    rows = _rows(tud_workload)
    assert len(rows) == 120 and {r["truth"] for r in rows} == {"external"}
    assert {r["video"] for r in rows} == set(TUD)
    for r in rows:
        frames, fps, length = _truth(r["video"])
        right = r[f"a{r['answer']}"]
        lives = defaultdict(list)
        for f in sorted(frames):
            for identity, cx, w in frames[f]:
                lives[identity].append((f, cx, w))
        if r["need"] == "count_at":
            span = resolve(r["question"], (length - 1) / fps)
            assert span is not None and span.is_moment, r["question"]
            # The named time is a whole frame: the count is not a neighbour's.
            assert abs(span.start * fps - round(span.start * fps)) < 1e-6, r["question"]
            expected = len(frames.get(round(span.start * fps) + 1, []))
        elif r["need"] == "most_at_once":
            expected = max(len(v) for v in frames.values())
        elif r["need"] == "count_distinct":
            expected = len(lives)
        elif r["need"] == "first_exit":
            expected = f"{(min(life[-1][0] for life in lives.values() if life[-1][0] < length) - 1) / fps:.1f} s"
        elif r["need"] == "last_arrival":
            expected = f"{(max(life[0][0] for life in lives.values()) - 1) / fps:.1f} s"
        elif r["need"] == "direction":
            # The dev set's hand-written answer; Stadtmitte's crowd walks both ways.
            assert r["video"] == "mot15_TUD-Campus.mp4"
            expected = "left to right"
        else:
            pytest.fail(f"unexpected need {r['need']}")
        assert right == str(expected), (r["question"], right, expected)
    assert {"count_at", "most_at_once", "count_distinct", "first_exit", "last_arrival",
            "direction"} <= {r["need"] for r in rows}
    # Campus: 8 people, at most 6 at once, the first leaves at frame 9 (0.32 s).
    campus = {r["need"]: r[f"a{r['answer']}"] for r in rows if r["video"] == TUD[0]}
    assert (campus["count_distinct"], campus["most_at_once"], campus["first_exit"]) == \
        ("8", "6", "0.3 s")


def test_options_wordings_and_the_reader(tud_workload):
    rows = _rows(tud_workload)
    wordings = defaultdict(set)
    for r in rows:
        options = [r[f"a{i}"] for i in range(5)]
        assert len({o.lower() for o in options}) == 5 and 0 <= int(r["answer"]) < 5
        matched = [t for t in workload.NEEDS[r["need"]][1]
                   if re.fullmatch(re.sub(r"\\\{\w+\\\}", ".+", re.escape(t)), r["question"])]
        assert matched, r["question"]
        wordings[r["need"]].add(matched[0])
    assert all(len(w) >= 4 for w in wordings.values()), wordings
    read = questions.read_questions(tud_workload)
    assert [q.question for q in read] == [r["question"] for r in rows]
    assert all(q.answer_text == r[f"a{r['answer']}"] for q, r in zip(read, rows))


def test_same_seed_same_bytes_other_seed_other_file(tud_folder, tud_workload, library_settings,
                                                   tmp_path):
    again = _make(tud_folder, library_settings, 0, tmp_path / "again.csv")
    assert again == tud_workload.read_bytes()
    assert _make(tud_folder, library_settings, 1, tmp_path / "other.csv") != again


def _tables(tmp_path: Path) -> VideoTables:
    """A 20 s clip: one word every 2 s, one caption every 2 s, 1-3 people at 5 sampled fps."""
    path = tmp_path / "clip.db"
    db = sqlite_utils.Database(path)
    schema.create_tables(db)
    db["video"].insert({"id": "v", "name": "clip.mp4", "fps": 10.0, "frames": 200, "duration": 20.0,
                        "width": 640, "height": 480, "has_audio": 1,
                        "models": json.dumps({"speech": "whisper", "ocr": "rapidocr",
                                              "categories": ["person"]})})
    words = ["apple", "banana", "cherry", "delta", "echo", "falcon", "garden", "harbor", "island",
             "jungle"]
    db["speech"].insert({"id": 1, "t_start": 0.0, "t_end": 20.0, "text": " ".join(words)})
    db["speech_words"].insert_all({"segment_id": 1, "t_start": 2.0 * k + 0.3, "t_end": 2.0 * k + 0.9,
                                   "word": f" {w}"} for k, w in enumerate(words))
    db["ocr"].insert_all({"id": k + 1, "t": 2.0 * k, "frame": 20 * k, "text": f"SCORE {k * 7}",
                          "x1": 10, "y1": 10, "x2": 100, "y2": 30, "confidence": 0.9}
                         for k in range(10))
    db["instances"].insert_all({"id": i, "category": "person", "first_seen": 0.0, "last_seen": 20.0,
                                "first_frame": 0, "last_frame": 198, "frame_count": 100,
                                "appearance": "", "action": ""} for i in (1, 2, 3))
    db["detections"].insert_all(
        {"instance_id": i, "frame": f, "t": f / 10, "x1": 100 * i, "y1": 100, "x2": 100 * i + 50,
         "y2": 300, "confidence": 0.9}
        for f in range(0, 200, 2) for i in (1, 2, 3) if i == 1 or (f // 20) % i == 0)
    return VideoTables(path, max_rows=100_000)


@pytest.mark.parametrize("need, operation, target", [("said_at", "speech", ""),
                                                     ("text_at", "screen_text", ""),
                                                     ("count_at", "in_view", "person")])
def test_table_questions_are_what_the_agents_queries_compute(tmp_path, need, operation, target):
    tables = _tables(tmp_path)
    samplers = workload.table_samplers(tables)
    assert set(samplers) == {"said_at", "text_at", "count_at"}
    rows = workload.generate({"clip.mp4": {need: samplers[need]}}, count=15, seed=3)
    assert len(rows) == 15 and all(r["truth"] == "tables" and r["need"] == need for r in rows)
    for r in rows:
        options = [r[f"a{i}"] for i in range(5)]
        value = run(TypedQuery(operation=operation, target=target, time="", until="", words=""),
                    r["question"], tables).value
        assert option_for_value(value, options) == r["answer"], (r["question"], value, options)


def test_a_video_with_nothing_to_ask_is_skipped(tmp_path):
    tables = _tables(tmp_path)
    db = sqlite_utils.Database(tables.db_path)
    for table in ("speech_words", "ocr", "detections", "instances"):
        db[table].delete_where()
    assert workload.table_samplers(VideoTables(tables.db_path)) == {}


# --- bench memory -------------------------------------------------------------------------------

def _fake_ask(questions_asked: list):
    """Memory off: 3 calls an answer, every answer right. Semantic/both: 3 calls and 2 learning
    until the fourth question, then 1 call from a replayed fact naming the option (the fifth
    answer is wrong, and its wrong fact is validated into memory)."""
    def ask(video_id, question, settings, *, options, n_solutions, memory, learn_now):
        k = len([q for q in questions_asked if q[0] == memory])
        questions_asked.append((memory, question))
        learn = memory.learn
        replays = memory.semantic and k >= 3
        chosen = 1 if (learn and k == 4) else 0
        replayed = [ReplayedEntry(id="f", kind="semantic", text=f"The answer is {options[chosen]}.",
                                  question=question, similarity=0.9, video_id=video_id, times=[],
                                  answer=options[chosen])] if replays else []
        # The fact decides only where ask says so: not on the sixth answer, though replayed.
        decided = EntryRef("f", "semantic") if replays and k < 5 else None
        learned = Lesson(verdict="valid", reason="", entry_id="e",
                         usage=Cost(llm_calls=2, prompt_tokens=50))
        basis = "memory" if replays else "computed"
        return fake_answer(
            question, options, chosen, usage=Cost(llm_calls=1 if replays else 3, prompt_tokens=100),
            memory=MemoryTrace(enabled=True, replayed=replayed, learned=learned, decided_by=decided)
            if learn else MemoryTrace(),
            confidence=Confidence(level="high", basis=basis, agreement="1/1", explanation=""))
    return ask


def test_bench_memory_figures_jsonl_chart_and_rebuild(tmp_path, monkeypatch, capsys,
                                                      library_settings):
    import backend.ingest.pipeline

    qfile = tmp_path / "w.csv"
    workload.write_csv([{"video": "clip.mp4", "qid": q, "type": "TC", "question": f"question {q}",
                         "answer": 0, "a0": "yes", "a1": "no", "a2": "maybe", "a3": "never",
                         "a4": "always", "truth": "external" if q % 2 else "tables",
                         "need": "count_at"} for q in range(1, 7)], qfile)
    monkeypatch.setattr(backend.ingest.pipeline, "ingest", lambda path, settings: SimpleNamespace(video_id="v"))
    asked: list = []
    jsonl, chart = tmp_path / "run.jsonl", tmp_path / "chart.html"
    summary = bench.memory_bench(qfile, tmp_path, settings=library_settings,
                                 configs=["off", "semantic", "both"], jsonl=jsonl, chart=chart,
                                 answer=_fake_ask(asked))
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(lines) == 18 and [r["config"] for r in lines[::6]] == ["off", "semantic", "both"]
    off, both = summary["configs"]["off"], summary["configs"]["both"]
    assert off["whole"]["llm_calls"] == 3 and off["whole"]["accuracy"] == 1.0
    # both: 5 calls each for questions 1-3, then 1 + 2 learning; second half = questions 4-6.
    assert both["whole"]["llm_calls"] == round((3 * 5 + 3 * 3) / 6, 2)
    assert both["second_half"]["llm_calls"] == 3 and both["calls_vs_off_second_half"] == 1.0
    # Questions 1, 3 and 5 are external; 5 is answered wrong.
    assert (both["second_half"]["external_correct"], both["second_half"]["external"]) == (0, 1)
    assert both["whole"]["external_accuracy"] == round(2 / 3, 3)
    assert both["fact_decided"] == 2 and both["answered_from_memory"] == 3
    assert both["wrong_facts"] == 1 and off["wrong_facts"] == 0
    assert both["replayed_per_answer"] == 0.5
    assert "procedural" not in summary["configs"]
    assert chart.is_file() and "plotly" in chart.read_text()[:5000]

    rebuilt = bench.summarise(bench.read_jsonl(jsonl))
    assert rebuilt["configs"] == summary["configs"]
    assert cli.main(["bench", "memory", "--from-jsonl", str(jsonl)]) == 0
    printed = capsys.readouterr().out
    assert all(name in printed for name in ("off", "semantic", "both")) and "1.0x" in printed
    assert cli.main(["bench", "memory", "--configs", "off,sometimes", "--json"]) == 2

    # The figures as a section of docs/EVALUATION.md: eval-report includes a folder's section.md.
    from backend.evaluation.report import evaluation_markdown

    folder = tmp_path / "memory-run"
    folder.mkdir()
    assert cli.main(["bench", "memory", "--from-jsonl", str(jsonl), "--quiet",
                     "--markdown", str(folder / "section.md")]) == 0
    (folder / "notes.md").write_text("### Notes\n\nwhat the run showed", encoding="utf-8")
    report = evaluation_markdown([folder], "python -m backend eval-report ...",
                                 tmp_path / "EVALUATION.md")
    figures, repeats = report.split("Repeats (")
    rows = [line for line in figures.splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0] for r in rows[1:]] == ["| off", "| semantic", "| both"]
    assert rows[3].endswith("| 1 | 1.0x |")  # both: one wrong fact, calls as off in the 2nd half
    # Questions 2-6 ask question 1's need of the same video with the same right answer.
    rows = [line for line in repeats.splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[:2] for r in rows[1:]] == [["| off", "5/5"], ["| semantic", "4/5"],
                                                       ["| both", "4/5"]]
    assert report.rstrip().endswith("what the run showed")


def test_the_external_workload_holds_only_ground_truth_in_two_halves(tmp_path, monkeypatch,
                                                                       library_settings):
    from dataclasses import replace

    from backend.evaluation import footage

    monkeypatch.setattr(footage, "VARIANTS", (footage.BY_NAME["mirrored"],
                                              footage.BY_NAME["half-fps"]))
    settings = replace(library_settings, cache_dir=tmp_path / "cache")
    out = tmp_path / "external" / "workload.csv"
    sequences = tracking.find_sequences(VIDEOS / "ground-truth")
    summary = workload.make_external_workload(sequences, out, settings, count=200)
    rows = _rows(out)
    assert len(rows) == summary["questions"] == 200 and {r["truth"] for r in rows} == {"external"}
    videos = {r["video"] for r in rows}
    assert all((out.parent / "videos" / v).is_file() for v in videos)
    # Each scene is in one half with all its variants: Stadtmitte tunes, Campus reports.
    half = {v: {r["half"] for r in rows if r["video"] == v} for v in videos}
    assert all(h == ({"tune"} if "Stadtmitte" in v else {"report"}) for v, h in half.items())
    assert sum("Campus" in v for v in videos) == sum("Stadtmitte" in v for v in videos) == 3
    # Counts are offered as a test offers them: five in a row, one or two apart.
    for r in rows:
        if r["need"] in ("count_at", "most_at_once", "count_distinct"):
            values = sorted(int(r[f"a{i}"]) for i in range(5))
            steps = {b - a for a, b in zip(values, values[1:])}
            assert steps in ({1}, {2}), (r["question"], values)
    answers = {(r["video"], r["need"]): r[f"a{r['answer']}"] for r in rows}
    # The variants' truth follows the picture: the same people, the walk mirrored.
    assert answers[("TUD-Campus-mirrored.mp4", "count_distinct")] == \
        answers[("TUD-Campus.mp4", "count_distinct")] == "8"
    assert answers[("TUD-Campus.mp4", "direction")] == "left to right"
    assert answers[("TUD-Campus-mirrored.mp4", "direction")] == "right to left"
