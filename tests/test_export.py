"""Exports (backend/exports, `python -m backend export`, the app's download buttons), each
read back by another program's parser: subtitles by `srt` and `webvtt-py`, CSV by the csv
module, GraphML by networkx, Markdown's image links by the file system."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import sqlite3
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import unquote

import gradio as gr
import networkx as nx
import pytest
import sqlite_utils
import srt
import webvtt
from PIL import Image

from app import downloads, handlers
from backend import cli
from backend.errors import ExportError
from backend.exports import answer as answer_export
from backend.exports import read_only, video
from backend.library import Library
from tests.conftest import copy_video

SPEECH = "autoeditor_example_speech.mp4"
TUD = "mot15_TUD-Campus.mp4"
DATA = Path(__file__).parent / "data"
_IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


@pytest.fixture(scope="module")
def speech_entry(ingested, library_settings):
    return Library(library_settings.home).get(ingested(SPEECH).video_id)


@pytest.fixture(scope="module")
def tud(ingested, library_settings):
    return Library(library_settings.home).get(ingested(TUD).video_id)


def _rows(entry, sql: str) -> list[sqlite3.Row]:
    conn = sqlite3.connect(entry.db_path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _tud_answer(tud) -> dict:
    """The recorded TUD answer (tests/data) with evidence times at two sampled frames, a
    highlighted object and a confidence, as `ask --json` prints them now."""
    answer = json.loads((DATA / "answer_tud_count_memory_off.json").read_text())
    sampled = _rows(tud, "SELECT DISTINCT frame, t FROM detections ORDER BY frame")
    times = [sampled[2]["t"], sampled[-1]["t"]]
    answer.update(video_id=tud.video_id, times=times, instance_ids=[1],
                  confidence={"level": "high", "basis": "computed", "agreement": "2/2",
                              "explanation": "computed from the tables; both answers agree"})
    answer["evidence"][0].update(times=times, instance_ids=[1])
    return answer


# --- subtitles ------------------------------------------------------------------------------

def test_subtitles_have_one_cue_per_speech_segment_at_its_times(speech_entry):
    rows = _rows(speech_entry, "SELECT t_start, t_end, text FROM speech ORDER BY t_start")
    assert rows and all(r["text"].strip() for r in rows)
    with read_only(speech_entry) as db:
        subrip = list(srt.parse(video.transcript_srt(db)))
        vtt = webvtt.from_buffer(io.StringIO(video.transcript_vtt(db)), strict=True).captions
    assert len(subrip) == len(vtt) == len(rows)
    for row, sub, cue in zip(rows, subrip, vtt):
        text = " ".join(row["text"].split())
        assert sub.start.total_seconds() == pytest.approx(row["t_start"], abs=0.001)
        assert sub.end.total_seconds() == pytest.approx(row["t_end"], abs=0.001)
        assert sub.content == text
        assert cue.start_time.in_seconds() == int(row["t_start"])
        assert str(cue.start_time) == str(webvtt.models.Timestamp.from_seconds(row["t_start"]))
        assert str(cue.end_time) == str(webvtt.models.Timestamp.from_seconds(row["t_end"]))
        assert html.unescape(cue.text) == text


def _speech_db(*texts: str) -> sqlite_utils.Database:
    db = sqlite_utils.Database(memory=True)
    db["speech"].create({"id": int, "t_start": float, "t_end": float, "text": str}, pk="id")
    db["speech"].insert_all([{"id": i, "t_start": i * 2.0, "t_end": i * 2.0 + 1.5, "text": t}
                             for i, t in enumerate(texts)])
    return db


def test_speech_that_looks_like_markup_stays_text_and_empty_segments_are_dropped():
    tricky = "a --> b <i>x</i> & y\n\nafter a blank line"
    db = _speech_db(tricky, "   ", "plain")
    expected = [" ".join(tricky.split()), "plain"]
    assert [s.content for s in srt.parse(video.transcript_srt(db))] == expected
    cues = webvtt.from_buffer(io.StringIO(video.transcript_vtt(db)), strict=True).captions
    assert [html.unescape(c.text) for c in cues] == expected
    assert [c.start for c in cues] == ["00:00:00.000", "00:00:04.000"]


def test_no_speech_is_a_valid_empty_file():
    db = _speech_db()
    assert list(srt.parse(video.transcript_srt(db))) == []
    assert webvtt.from_buffer(io.StringIO(video.transcript_vtt(db)), strict=True).captions == []


# --- tracks and graph -----------------------------------------------------------------------

def test_tracks_csv_has_one_row_per_detection_with_its_instance(tud):
    with read_only(tud) as db:
        table = list(csv.DictReader(io.StringIO(video.tracks_csv(db))))
    truth = _rows(tud, "SELECT d.*, i.category FROM detections d JOIN instances i "
                       "ON i.id = d.instance_id ORDER BY d.t, d.instance_id")
    assert len(table) == len(truth) == _rows(tud, "SELECT COUNT(*) FROM detections")[0][0] > 0
    assert list(table[0]) == list(video.TRACK_COLUMNS)
    for got, want in zip(table, truth):
        assert (int(got["instance_id"]), got["category"], int(got["frame"])) == \
            (want["instance_id"], want["category"], want["frame"])
        for column in ("t", "x1", "y1", "x2", "y2", "confidence"):
            assert float(got[column]) == want[column]
        assert got["facing"] == (want["facing"] or "")


def test_tracks_csv_says_what_each_object_is_doing_at_each_detection(tud, tmp_path):
    entry = copy_video(tud, tmp_path)
    first = _rows(entry, "SELECT MIN(t), MAX(t) FROM detections WHERE instance_id = 1")[0]
    middle = (first[0] + first[1]) / 2
    with sqlite3.connect(entry.db_path) as db:
        db.execute("DELETE FROM actions")  # only the rows below
        db.executemany("INSERT INTO actions (instance_id, action, t_start, t_end, score, evidence)"
                       " VALUES (?, ?, ?, ?, ?, ?)",
                       [(1, "walking", first[0], first[1], 0.9, "hips move"),
                        (1, "waving", first[0], middle, 0.7, "wrist above the shoulder")])
    with read_only(entry) as db:
        table = list(csv.DictReader(io.StringIO(video.tracks_csv(db))))
    mine = [r for r in table if r["instance_id"] == "1"]
    assert mine and all(r["actions"] == ("walking; waving" if float(r["t"]) <= middle
                                         else "walking") for r in mine)
    assert all(r["actions"] == "" for r in table if r["instance_id"] != "1")
    # A video ingested before actions were: the column is there, empty.
    with sqlite3.connect(entry.db_path) as db:
        db.execute("DROP TABLE actions")
    with read_only(entry) as db:
        older = list(csv.DictReader(io.StringIO(video.tracks_csv(db))))
    assert len(older) == len(table) and {r["actions"] for r in older} == {""}


def test_graphml_holds_every_node_and_edge_of_the_video(tud):
    with read_only(tud) as db:
        graph = nx.read_graphml(io.StringIO(video.graph_graphml(db)), force_multigraph=True)
    nodes = _rows(tud, "SELECT id, kind, name FROM graph_nodes")
    edges = _rows(tud, "SELECT source, target, relation FROM graph_edges")
    assert nodes and edges
    assert {n["id"]: (n["kind"], n["name"]) for n in nodes} == \
        {n: (d["kind"], d["name"]) for n, d in graph.nodes(data=True)}
    assert sorted((e["source"], e["target"], e["relation"]) for e in edges) == \
        sorted((s, t, d["relation"]) for s, t, d in graph.edges(data=True))


def test_graphml_attributes_are_scalars_without_nulls():
    # The two tables as the graph module defines them, with the values GraphML cannot hold:
    # NULLs, JSON lists, and one attribute that is text on one node and a number on another.
    db = sqlite_utils.Database(memory=True)
    db["graph_nodes"].insert_all([
        {"id": "object:1", "kind": "object", "name": "person 1", "t_start": 0.0, "t_end": None,
         "segments": "[1, 2]", "detail": '{"colour": "red"}'},
        {"id": "kind:person", "kind": "kind", "name": "person", "t_start": None, "t_end": None,
         "segments": "[]", "detail": None}], pk="id")
    db["graph_edges"].insert_all([
        {"id": 1, "source": "object:1", "target": "kind:person", "relation": "is-a",
         "t_start": 0.0, "t_end": 2.5, "segments": "[1]", "confidence": None, "origin": "tables"},
        {"id": 2, "source": "object:1", "target": "kind:person", "relation": "near",
         "t_start": 1.0, "t_end": 2.0, "segments": "[2]", "confidence": 0.5, "origin": 7}],
        pk="id")
    graph = nx.read_graphml(io.StringIO(video.graph_graphml(db)), force_multigraph=True)
    person = graph.nodes["object:1"]
    assert "t_end" not in person and json.loads(person["segments"]) == [1, 2]
    assert json.loads(person["detail"]) == {"colour": "red"}
    assert "detail" not in graph.nodes["kind:person"]
    assert graph.number_of_edges("object:1", "kind:person") == 2
    by_relation = {d["relation"]: d for *_, d in graph.edges(data=True)}
    assert "confidence" not in by_relation["is-a"] and by_relation["near"]["confidence"] == 0.5
    assert {by_relation["is-a"]["origin"], by_relation["near"]["origin"]} == {"tables", "7"}


def test_a_video_without_graph_tables_says_so():
    with pytest.raises(ExportError, match="no knowledge graph"):
        video.graph_graphml(_speech_db("x"))


# --- answers --------------------------------------------------------------------------------

def _image_links(markdown_path: Path) -> list[Path]:
    links = _IMAGE_LINK.findall(markdown_path.read_text())
    return [markdown_path.parent / unquote(link) for link in links]


def test_answer_markdown_links_key_frames_that_exist(tud, tmp_path):
    answer = _tud_answer(tud)
    out = tmp_path / "with space" / "my answer.md"
    out.parent.mkdir()
    written = answer_export.write(answer_export.parse(answer, "a"), tud, out, "md")
    text = out.read_text()
    images = _image_links(out)
    assert len(images) == 2 and images == written[1:]
    for image in images:
        assert image.is_file() and Image.open(image).size == (tud.width, tud.height)
    assert text.startswith(f"# {answer['question']}")
    assert "**Answer:** A. 1" in text and "**Confidence:** high: computed" in text
    assert "### 1. Count (node 1)" in text and "SELECT COUNT(DISTINCT instance_id)" in text
    for node in answer["tree"]:
        assert f"**[{node['id']}]**" in text
    assert text.count("**chosen**") == len(answer["chosen_leaves"])
    assert "failed: repeated step" in text


def test_answer_json_keeps_the_answer_and_adds_its_key_frames(tud, tmp_path):
    answer = _tud_answer(tud)
    out = tmp_path / "answer.json"
    answer_export.write(answer_export.parse(answer, "a"), tud, out, "json")
    exported = json.loads(out.read_text())
    assert exported["video"] == {"id": tud.video_id, "name": TUD}
    for key in ("question", "answer", "confidence", "evidence", "tree", "times", "usage"):
        assert exported[key] == answer[key], key
    frames = exported["key_frames"]
    assert [f["t"] for f in frames] == [round(t, 2) for t in answer["times"]]
    for f in frames:
        assert (out.parent / f["image"]).is_file()
        assert f["in_view"] == [r[0] for r in _rows(
            tud, f"SELECT instance_id FROM detections WHERE frame = {f['frame']} ORDER BY 1")]
        assert f["in_view"]


@pytest.mark.parametrize("text, words", [
    ("not json", "is not JSON"),
    ('{"error": "the endpoint cannot be reached", "kind": "LLMUnavailable"}',
     "records a failed ask (LLMUnavailable"),
    ("[1, 2]", "is not an answer from"),
    ('{"video_id": "v", "question": "q", "answer": "a", "tree": []}', "evidence: Field required"),
    ('{"video_id": "v", "question": "q", "answer": "a", "tree": [], '
     '"evidence": [{"node": 1, "tool": "Count", "input": "", "observation": "", "times": 3}]}',
     "evidence.0.times: Input should be a valid list"),
    # Python's json reads NaN; a time that is no number never reaches frame seeking.
    ('{"video_id": "v", "question": "q", "answer": "a", "tree": [], "evidence": [], '
     '"times": [NaN]}', "times.0: Input should be a finite number"),
    ('{"video_id": "v", "question": "q", "answer": "a", "evidence": [], '
     '"tree": [{"id": 0, "parent": 1}, {"id": 1, "parent": 0}]}',
     "the planner tree has a cycle through node"),
    ('{"video_id": "v", "question": "q", "answer": "a", "evidence": [], '
     '"tree": [{"id": 0}, {"id": 0}]}', "the planner tree repeats a node id"),
])
def test_a_malformed_answer_file_is_named_with_what_is_wrong(text, words):
    with pytest.raises(ExportError, match=re.escape(words)) as caught:
        answer_export.load(text, "saved.json")
    assert "'saved.json'" in str(caught.value)


# --- the command line -----------------------------------------------------------------------

def _export(monkeypatch, capfd, home: Path, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("MEMORYREEL_HOME", str(home))
    code = cli.main(["export", *args])
    out, err = capfd.readouterr()
    return code, out, err


def test_export_command(speech_entry, tud, library_settings, monkeypatch, capfd, tmp_path):
    home = library_settings.home
    code, out, _ = _export(monkeypatch, capfd, home, speech_entry.video_id, "--format", "srt")
    assert code == 0 and len(list(srt.parse(out))) == len(_rows(speech_entry, "SELECT * FROM speech"))
    code, out, err = _export(monkeypatch, capfd, home, tud.video_id, "--format", "vtt")
    assert code == 0 and out == "WEBVTT\n" and "has no transcribed speech" in err
    saved = tmp_path / "answer.json"
    saved.write_text(json.dumps(_tud_answer(tud)))
    code, out, _ = _export(monkeypatch, capfd, home, tud.video_id, "--format", "md", "--answer",
                           str(saved), "--out", str(tmp_path / "out" / "a.md"), "--json")
    assert code == 0 and json.loads(out)["out"] == str(tmp_path / "out" / "a.md")
    assert all(p.is_file() for p in _image_links(tmp_path / "out" / "a.md"))
    for args, kind, words in [
        ([tud.video_id, "--format", "md"], "UsageError", "needs --answer FILE"),
        ([tud.video_id, "--format", "md", "--answer", str(saved)], "UsageError", "needs --out"),
        ([tud.video_id, "--format", "csv", "--answer", str(saved)], "UsageError",
         "--answer is for --format md or json"),
        (["0123456789abcdef", "--format", "csv"], "NotFoundError", "No video with id"),
        ([speech_entry.video_id, "--format", "json", "--answer", str(saved)], "ExportError",
         f"is about video {tud.video_id}"),
        ([tud.video_id, "--format", "json", "--answer", str(tmp_path / "none.json")],
         "ExportError", "does not exist"),
    ]:
        code, out, _ = _export(monkeypatch, capfd, home, *args, "--json")
        assert code == 2 and json.loads(out)["kind"] == kind and words in json.loads(out)["error"]


# --- the app's download buttons -------------------------------------------------------------

def test_download_buttons_offer_files_from_the_session_folder(tud, library_settings, tmp_path,
                                                              monkeypatch):
    monkeypatch.setattr(downloads, "ROOT", tmp_path / "downloads")
    request = gr.Request(session_hash="tab-1")
    *answer_buttons, srt_file, vtt_file, csv_file, graph_file = \
        handlers.on_video_exports(tud.video_id, library_settings, request)
    assert [b["interactive"] for b in answer_buttons] == [False, False]
    for button in (srt_file, vtt_file, csv_file, graph_file):
        path = Path(button["value"])
        assert button["interactive"] and path.is_file()
        assert path.is_relative_to(tmp_path / "downloads" / "tab-1")
    assert len(list(csv.DictReader(open(csv_file["value"])))) == \
        _rows(tud, "SELECT COUNT(*) FROM detections")[0][0]
    nx.read_graphml(graph_file["value"])

    zipped, as_json = handlers.on_answer_exports([{"answer": _tud_answer(tud)}], 0,
                                                 library_settings, request)
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(zipped["value"]).extractall(unpacked)
    images = _image_links(unpacked / "answer.md")
    assert len(images) == 2 and all(p.is_file() for p in images)
    assert json.loads(Path(as_json["value"]).read_text())["answer"] == "1"
    assert handlers.on_answer_exports([], None, library_settings, request) == \
        (gr.update(value=None, interactive=False),) * 2

    downloads.forget(request)
    assert not (tmp_path / "downloads" / "tab-1").exists()
    assert downloads.session_folder(gr.Request(session_hash="../x")).parent == \
        tmp_path / "downloads"


def test_downloads_are_written_under_the_temp_folder_not_the_library(library_settings):
    assert downloads.ROOT.is_relative_to(tempfile.gettempdir())
    assert not downloads.ROOT.resolve().is_relative_to(library_settings.home.resolve())
