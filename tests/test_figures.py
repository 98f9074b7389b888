"""The per-answer panels, built from recorded answers (tests/data) and a real ingested clip."""

from __future__ import annotations

import copy
import html
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from plotly.colors import hex_to_rgb, sample_colorscale, unlabel_rgb

from app import figures, panels
from backend.actions import Action
from backend.ingest import decode, frames
from backend.library import Library
from backend.sql_runner import run_query
from tests.conftest import clip, copy_video, settings_for

DATA = Path(__file__).parent / "data"
TRACES = sorted(DATA.glob("answer_*.json"))


def _load(name: str) -> dict:
    return json.loads((DATA / name).read_text())


@pytest.fixture(params=[p.name for p in TRACES])
def answer(request) -> dict:
    return _load(request.param)


@pytest.fixture(scope="module")
def tud(ingested, library_settings):
    return Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id)


def test_traces_recorded():
    # Each recorded answer names its origin; together they cover memory off and on, and a
    # failure leaf, so the tests below see every kind of node and memory block.
    assert len(TRACES) >= 2
    answers = [_load(p.name) for p in TRACES]
    assert all(a["comment"] and a["tree"] and a["chosen_leaves"] for a in answers)
    assert {a["memory"]["enabled"] for a in answers} == {True, False}
    assert any(n["failure"] for a in answers for n in a["tree"])


# --- planner tree ---------------------------------------------------------------------------

def _node_points(fig) -> dict[int, dict]:
    """node id -> what the figure shows for it: position, colour value, outline, hover, symbol."""
    points = {}
    for trace in fig.data:
        if trace.mode != "markers+text":
            continue
        for i, node_id in enumerate(trace.customdata):
            assert node_id not in points, f"node {node_id} drawn twice"
            points[node_id] = {"x": trace.x[i], "y": trace.y[i], "colour": trace.marker.color[i],
                               "outline": trace.marker.line.width[i], "hover": trace.hovertext[i],
                               "symbol": trace.marker.symbol, "kind": trace.name}
    return points


def _path(tree: list[dict], leaf: int) -> list[int]:
    by_id = {n["id"]: n for n in tree}
    chain = [leaf]
    while by_id[chain[-1]]["parent"] is not None:
        chain.append(by_id[chain[-1]]["parent"])
    return chain


def test_tree_shows_every_node_with_its_hover_text(answer):
    fig = figures.tree_figure(answer["tree"], answer["chosen_leaves"])
    points = _node_points(fig)
    assert set(points) == {n["id"] for n in answer["tree"]}
    for node in answer["tree"]:
        hover = points[node["id"]]["hover"]
        assert f"reward {node['reward']:+.2f}" in hover and f"visits {node['visits']}" in hover
        # The first words of each field, escaped as plotly needs them, are in the hover text.
        for key in ("thought", "action_input", "observation", "failure", "answer"):
            if node.get(key):
                assert html.escape(node[key].split("\n")[0][:30], quote=False) in hover, key
        if node["parent"] is not None:
            assert node["action"] in hover
    # Depth runs along x; siblings never overlap.
    positions = [(p["x"], p["y"]) for p in points.values()]
    assert len(set(positions)) == len(positions)
    assert all(points[n["id"]]["x"] == n["depth"] for n in answer["tree"])


def test_tree_highlights_the_chosen_path_and_only_it(answer):
    tree = answer["tree"]
    fig = figures.tree_figure(tree, answer["chosen_leaves"])
    on_path = {i for leaf in answer["chosen_leaves"] for i in _path(tree, leaf)}
    points = _node_points(fig)
    assert {i for i, p in points.items() if p["outline"] > 1} == on_path
    chosen_edges = next(t for t in fig.data if t.name == "chosen path" and t.mode == "lines"
                        and t.x[0] is not None)
    drawn = {(chosen_edges.x[i], chosen_edges.y[i], chosen_edges.x[i + 1], chosen_edges.y[i + 1])
             for i in range(0, len(chosen_edges.x), 3)}
    by_id = {n["id"]: n for n in tree}
    expected = {(points[by_id[i]["parent"]]["x"], points[by_id[i]["parent"]]["y"],
                 points[i]["x"], points[i]["y"]) for i in on_path if by_id[i]["parent"] is not None}
    assert drawn == expected
    for node in tree:
        if node["id"] not in on_path:
            assert "chosen path" not in points[node["id"]]["hover"]


def _rgb(fig, value: float) -> tuple[float, float, float]:
    axis = fig.layout.coloraxis
    scale = [[stop, colour] for stop, colour in axis.colorscale]
    colour = sample_colorscale(scale, (value - axis.cmin) / (axis.cmax - axis.cmin))[0]
    return unlabel_rgb(colour) if colour.startswith("rgb") else hex_to_rgb(colour)


def test_tree_colours_follow_rewards_and_marks_failures(answer):
    fig = figures.tree_figure(answer["tree"], answer["chosen_leaves"])
    points = _node_points(fig)
    assert fig.layout.coloraxis.cmin == -fig.layout.coloraxis.cmax
    for node in answer["tree"]:
        point = points[node["id"]]
        assert point["colour"] == pytest.approx(node["reward"])
        red, _, blue = _rgb(fig, node["reward"])
        if node["reward"] <= -0.5:
            assert red > blue + 60, node
        elif node["reward"] >= 0.5:
            assert blue > red + 60, node
        if node["failure"]:
            assert point["symbol"] == "x" and "failure:" in point["hover"]
            assert node["reward"] < 0  # the planner punishes failures, and the figure shows it
        elif node["answer"] is not None:
            assert point["symbol"] == "diamond"


def test_tree_hover_is_escaped_and_truncated():
    tree = _load("answer_tud_count_memory_off.json")["tree"]
    node = copy.deepcopy(tree[1])
    node["observation"] = "SQL: SELECT * FROM detections WHERE t < 3 <script>x</script>\n" + "row\n" * 500
    fig = figures.tree_figure([tree[0], node], [])
    hover = _node_points(fig)[node["id"]]["hover"]
    assert "<script>" not in hover and "&lt;script&gt;" in hover and "t &lt; 3" in hover
    assert len(hover) < 1200 and "…" in hover


def test_tree_without_nodes_is_an_empty_state():
    fig = figures.tree_figure([], [])
    assert figures.is_empty_state(fig)
    assert "no steps" in fig.layout.annotations[0].text


# --- timeline -------------------------------------------------------------------------------

def _bars(fig) -> dict[int, object]:
    return {t.meta["instance_id"]: t for t in fig.data if t.type == "bar" and "instance_id" in t.meta}


def test_timeline_has_a_row_per_instance_and_highlights_the_answers(tud):
    data = panels.timeline_data(tud)
    answer = _load("answer_tud_count_memory_off.json")
    used = [data.instances[1]["id"], data.instances[-1]["id"]]
    times = [data.instances[-1]["first_seen"]]
    fig = figures.timeline_figure(data.instances, used, times, data.duration, data.spans)
    bars = _bars(fig)
    colour_of = frames.colours(data.instances)
    assert sorted(bars) == [i["id"] for i in data.instances]
    assert len({t.y[0] for t in bars.values()}) == len(data.instances)  # one row each
    for iid, bar in bars.items():
        if iid in used:
            assert bar.marker.color == colour_of[iid]
            assert "used by this answer" in bar.hovertext[0]
        else:
            assert bar.marker.color == figures.UNUSED and "not used" in bar.hovertext[0]
    evidence = next(t for t in fig.data if t.name == "evidence times")
    assert list(evidence.x) == times
    assert [s.x0 for s in fig.layout.shapes] == times
    # The recorded answer used no objects and no times: every row is grey, no markers.
    fig = panels.timeline_panel(tud, answer)
    assert {b.marker.color for b in _bars(fig).values()} == {figures.UNUSED}
    assert not fig.layout.shapes
    # Without an answer every object keeps its own colour.
    fig = panels.timeline_panel(tud, None)
    assert all(b.marker.color == colour_of[i] for i, b in _bars(fig).items())


@pytest.fixture(scope="module")
def tud_unfilled(tmp_path_factory):
    """TUD-Campus with briefly hidden people left unseen, so that its tracks have gaps."""
    from backend.ingest.pipeline import ingest

    settings = settings_for(tmp_path_factory.mktemp("unfilled"), fill_gap_seconds=0.0)
    return Library(settings.home).get(ingest(clip("mot15_TUD-Campus.mp4"), settings).video_id)


def test_timeline_spans_split_where_an_object_is_unseen(tud_unfilled):
    tud = tud_unfilled
    gap = 0.3  # a little over the 0.2 s between sampled frames
    data = panels.timeline_data(tud, gap_s=gap)
    rows = run_query(tud.db_path, "SELECT instance_id, t FROM detections ORDER BY instance_id, t",
                     timeout_s=5, max_rows=100_000).rows
    expected: dict[int, list[list[float]]] = {}
    for iid, t in rows:
        spans = expected.setdefault(iid, [])
        if spans and t - spans[-1][1] <= gap:
            spans[-1][1] = t
        else:
            spans.append([t, t])
    assert {i: [list(s) for s in v] for i, v in data.spans.items()} == expected
    assert any(len(v) > 1 for v in expected.values())  # the clip does have such gaps
    fig = figures.timeline_figure(data.instances, None, [], data.duration, data.spans)
    for iid, bar in _bars(fig).items():
        assert len(bar.base) == len(expected[iid])
        assert list(bar.base) == [s[0] for s in expected[iid]]


def test_many_tracks_of_one_kind_share_a_row_that_a_button_expands():
    # A walking camera's kitchen: 30 short moving-object tracks beside two people.
    instances = [{"id": k, "category": "moving object", "first_seen": k * 0.5,
                  "last_seen": k * 0.5 + 0.4} for k in range(1, 31)]
    instances += [{"id": 40, "category": "person", "first_seen": 0.0, "last_seen": 15.0},
                  {"id": 41, "category": "person", "first_seen": 2.0, "last_seen": 9.0}]
    fig = figures.timeline_figure(instances, [7, 40], [3.5], 16.0)
    group = next(t for t in fig.data if t.type == "bar" and (t.meta or {}).get("group"))
    # The answer's own moving object keeps its row; the other 29 are one row.
    assert group.y[0] == "29 × moving object" and len(group.base) == 29
    assert 7 not in group.meta["instance_ids"] and len(group.meta["instance_ids"]) == 29
    bars = _bars(fig)
    shown = {iid for iid, t in bars.items() if iid is not None and t.visible is not False}
    assert shown == {7, 40, 41}
    assert list(fig.layout.yaxis.categoryarray) == [
        "#7 moving object", "#40 person", "#41 person", "29 × moving object"]
    grouped, every = fig.layout.updatemenus[0].buttons
    assert every.label == "every track"
    assert sum(v for v, t in zip(every.args[0]["visible"], fig.data) if t.type == "bar") == 32
    assert len(every.args[1]["yaxis.categoryarray"]) == 32 and every.args[1]["height"] > \
        grouped.args[1]["height"] == fig.layout.height
    # Each kind keeps one legend entry, grouped or not (a hidden trace shows none).
    for state in (grouped, every):
        entries = [t.name for t, v in zip(fig.data, state.args[0]["visible"])
                   if v and t.type == "bar" and t.showlegend]
        assert sorted(entries) == ["moving object", "person"], (state.label, entries)
    # A dozen of a kind still get a row each.
    few = figures.timeline_figure(instances[:12], None, [], 16.0)
    assert not few.layout.updatemenus and len(_bars(few)) == 12


def test_timeline_without_instances_is_an_empty_state():
    fig = figures.timeline_figure([], [], [1.0], 10.0)
    assert figures.is_empty_state(fig)


def _strips(fig) -> dict[int, object]:
    return {t.meta["actions_of"]: t for t in fig.data if "actions_of" in (t.meta or {})}


def test_timeline_shows_what_each_person_does_on_their_row(tud, tmp_path):
    entry = copy_video(tud, tmp_path / "with-actions")
    first, second = panels.timeline_data(entry).instances[:2]
    rows = [(first["id"], "walking", first["first_seen"], first["first_seen"] + 1.5, 0.9,
             "hips move 40 px per s over 8 frames", None),
            (first["id"], "waving", first["first_seen"] + 1.5, first["first_seen"] + 2.0, 0.7,
             "wrist above the shoulder in 5 of 6 frames", None),
            (second["id"], "facing each other", second["first_seen"], second["first_seen"] + 1.0,
             0.6, "noses 1.2 m apart, turned together", first["id"])]
    with sqlite3.connect(entry.db_path) as db:
        db.execute("DELETE FROM actions")  # only the rows below: what each strip shows is known
        db.executemany("INSERT INTO actions (instance_id, action, t_start, t_end, score, evidence,"
                       " other_id) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    fig = panels.timeline_panel(entry, None)
    strips = _strips(fig)
    assert sorted(strips) == sorted({first["id"], second["id"]})
    bars = {t.meta["instance_id"]: t for t in fig.data if "instance_id" in (t.meta or {})}
    for iid, strip in strips.items():
        mine = [r for r in rows if r[0] == iid]
        assert set(strip.y) == {bars[iid].y[0]}  # on the person's own row
        assert list(strip.text) == [r[1] for r in mine]
        assert list(strip.base) == [r[2] for r in mine]
        for hover, (_, action, start, end, _, evidence, other) in zip(strip.hovertext, mine):
            assert action in hover and f"{start:.1f} – {end:.1f} s" in hover
            assert evidence in hover
            assert (f"with #{other}" in hover) == (other is not None)
    # A video ingested before actions were has none to show, and its timeline is as before.
    older = copy_video(tud, tmp_path / "older")
    with sqlite3.connect(older.db_path) as db:
        db.execute("DROP TABLE actions")
    fig = panels.timeline_panel(older, None)
    assert not _strips(fig) and len(_bars(fig)) == len(panels.timeline_data(older).instances)


def test_actions_of_a_grouped_track_show_when_every_track_is_shown():
    people = [{"id": k, "category": "person", "first_seen": k * 0.5, "last_seen": k * 0.5 + 3}
              for k in range(1, 16)]
    acts = {3: [Action(3, "running", 1.5, 3.0, 0.8, "feet off the ground in 4 of 7 frames")],
            40: [Action(40, "riding", 0.0, 2.0, 0.9, "hips on the bicycle #41", 41)]}
    people.append({"id": 40, "category": "person", "first_seen": 0.0, "last_seen": 9.0})
    fig = figures.timeline_figure(people, [40], [], 10.0, None, acts)
    strips = _strips(fig)
    assert strips[40].visible is not False and strips[3].visible is False
    assert strips[40].y[0] == "#40 person" and "with #41" in strips[40].hovertext[0]
    grouped, every = fig.layout.updatemenus[0].buttons
    for state, shown in ((grouped, False), (every, True)):
        visible = dict(zip([id(t) for t in fig.data], state.args[0]["visible"]))
        assert visible[id(strips[3])] is shown and visible[id(strips[40])] is True


# --- key frames -----------------------------------------------------------------------------

def test_frames_are_picked_at_the_evidence_times(tud):
    sampled = run_query(tud.db_path, "SELECT DISTINCT frame, t FROM detections ORDER BY frame",
                        timeout_s=5, max_rows=10_000).rows
    times = [sampled[3][1], sampled[-2][1] + 0.05]
    assert frames.frames_at_times(tud, times) == [sampled[3][0], sampled[-2][0]]
    assert frames.frames_at_times(tud, []) == frames.key_frames(tud, 4)
    # Many evidence times: the picks spread over them, first and last included.
    many = [t for _, t in sampled]
    picks = frames.frames_at_times(tud, many, count=4)
    assert len(picks) == 4 and picks[0] == sampled[0][0] and picks[-1] == sampled[-1][0]


def test_frame_between_samples_far_from_detections_is_the_video_frame(tud, monkeypatch):
    # With no sampled detection near enough, the frame at the time itself is shown (no boxes
    # borrowed from another moment).
    monkeypatch.setattr(frames, "NEAREST_DETECTION_S", 0.0)
    fps = tud.info()["fps"]
    assert frames.frames_at_times(tud, [0.1]) == [round(0.1 * fps)]


def test_evidence_gallery_draws_the_frames_with_ids(tud):
    sampled = run_query(tud.db_path, "SELECT frame, t, instance_id FROM detections ORDER BY frame",
                        timeout_s=5, max_rows=10_000).as_dicts()
    frame, t = sampled[-1]["frame"], sampled[-1]["t"]
    ids = sorted(r["instance_id"] for r in sampled if r["frame"] == frame)
    gallery = panels.evidence_frames(tud, {"times": [t], "instance_ids": ids[:1]})
    assert len(gallery) == 1
    image, caption = gallery[0]
    assert image.size == (tud.width, tud.height)
    assert f"frame {frame}" in caption and f"{t:.1f} s" in caption
    assert caption.endswith(f"used by the answer: #{ids[0]}")
    assert caption.split(" · ")[2] == "in view: " + ", ".join(f"#{i}" for i in ids)
    # The drawn frame differs from the raw one: the boxes are there.
    assert image.tobytes() != frames.annotated_frame(tud, frame, highlight=set()).tobytes()
    no_times = panels.evidence_frames(tud, {"times": [], "instance_ids": []})
    assert [c.split("frame ")[1].split(" ")[0] for _, c in no_times] == \
        [str(f) for f in frames.key_frames(tud, 4)]


@pytest.mark.parametrize("name", ["bgslib_video02_highway.avi", "intel_car-detection.mp4"])
def test_frames_drawn_are_the_frames_ingest_tracked(name):
    # decord's random access lands on neighbouring frames in the AVI from frame 120 on, where
    # the boxes drawn would then sit on another moment's picture.
    path = clip(name)
    meta = decode.probe(path)
    wanted = sorted({0, 121, 302, meta.frames // 2, meta.frames * 3 // 4})
    tracked = {i: frame for i, _, frame in decode.iter_frames(path, meta, wanted)}
    shown = decode.frames_at(path, meta, wanted)
    assert sorted(shown) == sorted(tracked)
    assert all(np.array_equal(shown[i], tracked[i]) for i in wanted)


# --- memory panels ----------------------------------------------------------------------------

def test_memory_table_lists_what_was_replayed():
    answer = _load("answer_intel_when_memory_handmade.json")
    memory = answer["memory"]
    table, line = panels.memory_panel(answer)
    assert table["headers"] == ["kind", "memory", "similarity", "source video", "times"]
    assert [r[0] for r in table["data"]] == [m["kind"] for m in memory["replayed"]]
    # A pattern is replayed by task type, not by similarity: it has none.
    assert [r[2] for r in table["data"]] == [None if m["similarity"] is None
                                             else round(m["similarity"], 2) for m in memory["replayed"]]
    names = {"32ae8133fa502779": "mot15_TUD-Campus.mp4"}
    table, _ = panels.memory_panel(answer, names)
    for row, item in zip(table["data"], memory["replayed"]):
        assert row[1][:40] == " ".join(item["text"].split())[:40]
        expected = ("this video" if item["video_id"] == answer["video_id"]
                    else names.get(item["video_id"], "any video"))
        assert row[3] == expected
        if item["times"]:
            assert row[4].startswith(f"{item['times'][0]:.1f}") and row[4].endswith(" s")
        else:
            assert row[4] == ""
    assert f"{memory['complexity']:.2f}" in line and f"{memory['p']:.2f}" in line
    assert f"{memory['e']:.2f}" in line and f"k_s = {memory['k_s']}" in line
    assert f"k_p = {memory['k_p']}" in line and memory["task_type"] in line
    # Not rated: no step needed the rating, and the line says so rather than "P(q) = 0.00".
    unrated = {**answer, "memory": {**memory, "rated": False, "task_type": "", "p": 0.0}}
    _, line = panels.memory_panel(unrated)
    assert "not rated" in line and "P(q) not asked" in line and "P(q) = " not in line


def test_memory_panel_says_when_memory_was_off_or_nothing_replayed():
    table, line = panels.memory_panel(_load("answer_tud_count_memory_off.json"))
    assert table["data"] == [] and "off" in line
    table, line = panels.memory_panel({"video_id": "x", "question": "q"})  # no memory block
    assert table["data"] == [] and "off" in line
    # Memory on but empty (recorded): the C(q) line, why nothing came back, what was learned.
    answer = _load("answer_intel_when_memory_empty.json")
    table, line = panels.memory_panel(answer)
    assert table["data"] == [] and "Nothing was replayed" in line
    assert f"k_s = {answer['memory']['k_s']}" in line and "judged invalid" in line


def test_replay_bars_sorted_most_first_and_answer_highlighted():
    counts = _load("replay_counts_handmade.json")["counts"]
    answer = _load("answer_intel_when_memory_handmade.json")
    mine = {m["id"] for m in answer["memory"]["replayed"]}
    fig = panels.replay_panel(answer, counts)
    order = list(fig.layout.yaxis.categoryarray)
    replays = {str(c["id"]): c["replays"] for c in counts}
    assert order == sorted(order, key=lambda i: -replays[i])
    assert set(order) == set(replays)
    kinds = [t for t in fig.data if t.name in figures.KIND_COLOURS]
    shown = {y: x for t in kinds for y, x in zip(t.y, t.x)}
    assert shown == replays
    for trace in kinds:
        assert trace.marker.color == figures.KIND_COLOURS[trace.name]
        assert all(c["kind"] == trace.name for c in counts if str(c["id"]) in trace.y)
    outline = next(t for t in fig.data if t.name == "used by this answer")
    assert set(outline.y) == mine
    bold = {i for i, text in zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext)
            if text.startswith("<b>")}
    assert bold == mine
    # Top 3 only, but the answer's own entries still show.
    fig = figures.replay_figure(counts, mine, top=3)
    top3 = [str(c["id"]) for c in sorted(counts, key=lambda c: -c["replays"])[:3]]
    assert set(fig.layout.yaxis.categoryarray) == set(top3) | mine


def test_replay_figure_without_replays_is_an_empty_state():
    assert figures.is_empty_state(figures.replay_figure([], set()))
    fig = panels.replay_panel(_load("answer_tud_count_memory_off.json"), [])
    assert figures.is_empty_state(fig) and "No memory" in fig.layout.annotations[0].text
