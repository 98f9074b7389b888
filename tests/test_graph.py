"""The knowledge graph built at ingest from the real clips' tables, and retrieval by personalised
PageRank over it: the segment that holds a table-built question's answer comes back in the top 3,
for the question and for a paraphrase of it."""

from __future__ import annotations

import json
import sqlite3

import pytest
import sqlite_utils

from backend.agent.graph_tool import GraphTool
from backend.agent.tools import ToolContext
from backend.graph import build
from backend.graph.network import to_networkx
from backend.graph.ppr import GraphIndex
from backend.library import Library
from models.keywords import keywords

CAMPUS = "mot15_TUD-Campus.mp4"
SPEECH = "autoeditor_example_speech.mp4"
HIGHWAY = "bgslib_video02_highway.avi"


@pytest.fixture(scope="module")
def entry(ingested, library_settings):
    def get(name: str):
        return Library(library_settings.home).get(ingested(name).video_id)
    return get


def _db(entry) -> sqlite_utils.Database:
    return sqlite_utils.Database(entry.db_path)


def test_every_tracked_object_is_a_node_and_arrivals_are_chained(entry):
    video = entry(CAMPUS)
    db = _db(video)
    instances = list(db.query("SELECT id, category, first_seen FROM instances ORDER BY first_seen, id"))
    objects = {r["id"]: r for r in db.query("SELECT * FROM graph_nodes WHERE kind = 'object'")}
    assert set(objects) == {f"object:{i['id']}" for i in instances}
    arrivals = list(db.query("SELECT source, target FROM graph_edges WHERE relation = 'enters-after'"))
    assert len(arrivals) == len(instances) - 1
    order = [f"object:{i['id']}" for i in instances]
    assert all(order.index(a["source"]) == order.index(a["target"]) + 1 for a in arrivals)
    info = video.info()
    assert info["graph"] == {"nodes": db["graph_nodes"].count, "edges": db["graph_edges"].count}
    assert info["graph"]["edges"] > len(instances)


def test_appears_with_only_joins_objects_seen_on_the_same_frames(entry):
    db = _db(entry(CAMPUS))
    frames = {}
    for r in db.query("SELECT instance_id, t FROM detections"):
        frames.setdefault(f"object:{r['instance_id']}", set()).add(r["t"])
    pairs = list(db.query("SELECT * FROM graph_edges WHERE relation = 'appears-with'"))
    assert pairs
    scenes = {r["id"]: (r["t_start"], r["t_end"]) for r in db.query("SELECT * FROM scenes")}
    for edge in pairs:
        both = frames[edge["source"]] & frames[edge["target"]]
        assert min(both) == edge["t_start"] and max(both) == edge["t_end"]
        # Each cited segment holds part of the span the edge holds.
        for segment in json.loads(edge["segments"]):
            start, end = scenes[segment]
            assert start <= edge["t_end"] and edge["t_start"] <= end


def test_speech_gives_topics_the_speaker_says(entry):
    db = _db(entry(SPEECH))
    said = {w for r in db.query("SELECT text FROM speech") for w in keywords(r["text"])}
    topics = {r["name"] for r in db.query("SELECT name FROM graph_nodes WHERE kind = 'topic'")}
    assert topics and topics <= said
    says = db["graph_edges"].count_where("relation = 'says' AND source = 'speaker:1'")
    assert says == len(topics)


def _questions(db: sqlite_utils.Database) -> list[tuple[str, list[tuple[float, float]]]]:
    """Questions whose answer a table holds, each with a paraphrase, and the spans that answer."""
    out = []
    segments = list(db.query("SELECT t_start, t_end, text FROM speech"))
    for row in segments:
        for word in sorted(w for w in set(keywords(row["text"])) if len(w) >= 4)[:3]:
            spans = [(s["t_start"], s["t_end"]) for s in segments if word in keywords(s["text"])]
            out += [(f"When does the speaker say {word}?", spans),
                    (f"At what moment is {word} mentioned?", spans)]
    for row in db.query("SELECT id, category, first_seen, last_seen FROM instances"):
        span = [(row["first_seen"], row["last_seen"])]
        out += [(f"When is {row['category']} {row['id']} in view?", span),
                (f"At what time can we see {row['category']} number {row['id']}?", span)]
    return out


@pytest.mark.parametrize("name", [CAMPUS, SPEECH, HIGHWAY])
def test_the_answer_segment_is_in_the_top_three(entry, name):
    db = _db(entry(name))
    index = GraphIndex(db)
    questions = _questions(db)
    assert len(questions) >= 10
    missed = []
    for question, spans in questions:
        hits = index.search(question, k=3)
        if not any(h.t_start <= b and a <= h.t_end for h in hits for a, b in spans):
            missed.append((question, [(h.t_start, h.t_end) for h in hits]))
    assert not missed


def test_a_question_naming_nothing_in_the_graph_gets_nothing(entry):
    assert GraphIndex(_db(entry(CAMPUS))).search("What is the meaning of life?") == []


def test_the_graph_tool_cites_times_and_objects(entry, library_settings):
    video = entry(HIGHWAY)
    db = _db(video)
    car = next(db.query("SELECT id, first_seen, last_seen FROM instances WHERE category = 'car' "
                        "ORDER BY last_seen - first_seen DESC LIMIT 1"))
    ctx = ToolContext(video_id=video.video_id, db_path=video.db_path, memory_folder=video.folder,
                      llm=None, embed=None, usage=None)
    seen = GraphTool().run(f"car {car['id']}", ctx)
    assert seen.ok and car["id"] in seen.instance_ids
    assert all(car["first_seen"] - 2 <= t <= car["last_seen"] for t in seen.times)
    assert f"car {car['id']}" in seen.text


def test_a_library_from_before_graphs_gets_its_graph_on_first_info(entry, tmp_path):
    video = entry(CAMPUS)
    expected = video.info()["graph"]
    with sqlite3.connect(video.db_path) as conn:
        conn.execute("DROP TABLE graph_edges")
    assert video.info()["graph"] == expected


def test_the_whole_graph_reads_as_networkx(entry):
    db = _db(entry(SPEECH))
    graph = to_networkx(db)
    assert graph.number_of_nodes() == db["graph_nodes"].count
    assert graph.number_of_edges() == db["graph_edges"].count
    assert graph.nodes["speaker:1"]["kind"] == "speaker"
    assert build.write(db) == {"nodes": db["graph_nodes"].count, "edges": db["graph_edges"].count}
