"""The per-answer panels, built from an Answer dict and the video it is about.

Objects (timeline + key frames at the evidence times), retrieved memories (table + one line on
how much was replayed and why), replay counts, the planner tree, and the part of the knowledge
graph the answer drew on. Reads the video's tables through the read-only SQL runner (the graph
through a read-only connection); no Gradio here, so the page only wires the results to
components.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import plotly.graph_objects as go
from PIL import Image

from app import figures, graph_figure
from backend import actions as video_actions
from backend.actions import Action
from backend.exports import read_only
from backend.graph.network import answer_subgraph, has_graph, to_networkx
from backend.graph.ppr import GraphIndex
from backend.ingest import frames
from backend.library import VideoEntry
from backend.sql_runner import run_query

_QUERY_TIMEOUT_S = 5.0
_MAX_ROWS = 100_000
# A tracked object unseen for longer than this has left the view; shorter gaps are missed
# detections and do not split its bar.
PRESENCE_GAP_S = 1.0
MEMORY_TEXT_CHARS = 160


@dataclass
class TimelineData:
    instances: list[dict]
    spans: dict[int, list[tuple[float, float]]]
    duration: float
    actions: dict[int, list[Action]] = field(default_factory=dict)


def _query(entry: VideoEntry, sql: str) -> list[dict]:
    return run_query(entry.db_path, sql, timeout_s=_QUERY_TIMEOUT_S, max_rows=_MAX_ROWS).as_dicts()


def timeline_data(entry: VideoEntry, gap_s: float = PRESENCE_GAP_S) -> TimelineData:
    """Tracked objects, their presence intervals (split where unseen for over `gap_s`) and
    what each does when."""
    # Every column: videos ingested before the colours' shares were kept have none.
    instances = _query(entry, "SELECT * FROM instances ORDER BY id")
    # Gaps and islands in SQL: a new span starts where the previous sighting is over gap_s ago.
    rows = _query(entry, f"""
        WITH d AS (SELECT instance_id, t,
                          LAG(t) OVER (PARTITION BY instance_id ORDER BY t) AS prev
                   FROM detections),
             s AS (SELECT instance_id, t,
                          SUM(CASE WHEN prev IS NULL OR t - prev > {float(gap_s)!r} THEN 1 ELSE 0 END)
                              OVER (PARTITION BY instance_id ORDER BY t) AS span
                   FROM d)
        SELECT instance_id, MIN(t) AS start, MAX(t) AS end FROM s
        GROUP BY instance_id, span ORDER BY instance_id, start""")
    spans: dict[int, list[tuple[float, float]]] = {}
    for row in rows:
        spans.setdefault(row["instance_id"], []).append((row["start"], row["end"]))
    with read_only(entry) as db:
        actions = video_actions.by_instance(video_actions.read(db))
    return TimelineData(instances=instances, spans=spans, duration=entry.duration,
                        actions=actions)


def timeline_panel(entry: VideoEntry, answer: Mapping | None) -> go.Figure:
    """The object timeline for `entry`, with `answer`'s objects and times picked out."""
    data = timeline_data(entry)
    highlight = None if answer is None else answer.get("instance_ids") or []
    times = [] if answer is None else answer.get("times") or []
    return figures.timeline_figure(data.instances, highlight, times, data.duration, data.spans,
                                   data.actions)


def evidence_frames(entry: VideoEntry, answer: Mapping | None,
                    count: int = 4) -> list[tuple[Image.Image, str]]:
    """(image, caption) pairs for a gallery: frames at the answer's evidence times with every
    tracked box drawn, the answer's objects in thicker lines; key frames if it gave no times."""
    times = list((answer or {}).get("times") or [])
    used = set((answer or {}).get("instance_ids") or [])
    fps = _query(entry, "SELECT fps FROM video")[0]["fps"] or 1.0
    picks = frames.frames_at_times(entry, times, count)
    images = frames.annotated_frames(entry, picks, highlight=used)  # one decoding pass for all
    gallery = []
    for frame in picks:
        ids = [r["instance_id"] for r in _query(
            entry, f"SELECT instance_id FROM detections WHERE frame = {int(frame)} "
                   "ORDER BY instance_id")]
        caption = f"{frame / fps:.1f} s · frame {frame} · " + (
            "in view: " + ", ".join(f"#{i}" for i in ids) if ids else "nothing tracked")
        if used & set(ids):
            caption += " · used by the answer: " + ", ".join(f"#{i}" for i in ids if i in used)
        gallery.append((images[frame], caption))
    return gallery


def _format_times(times: Sequence[float] | None) -> str:
    if not times:
        return ""
    shown = ", ".join(f"{t:.1f}" for t in list(times)[:4])
    return f"{shown}{' …' if len(times) > 4 else ''} s"


def _number(value, digits: int = 2) -> str:
    return "–" if value is None else f"{float(value):.{digits}f}"


def memory_panel(answer: Mapping, video_names: Mapping[str, str] | None = None) -> tuple[dict, str]:
    """({"headers", "data"} of the memories the answer replayed, a markdown line on why)."""
    headers = ["kind", "memory", "similarity", "source video", "times"]
    memory = answer.get("memory")
    if not memory or not memory.get("enabled"):
        off = ("**Long-term memory was off for this answer**: nothing was replayed and nothing "
               "was learned from it.")
        return {"headers": headers, "data": []}, off
    names = video_names or {}
    rows = []
    for item in memory.get("replayed") or []:
        source = item.get("video_id")
        if source and source == answer.get("video_id"):
            source_label = "this video"
        else:
            source_label = names.get(source, source) if source else "any video"
        rows.append([item.get("kind", ""), _shorten(item.get("text", "")),
                     round(float(item["similarity"]), 2) if item.get("similarity") is not None else None,
                     source_label, _format_times(item.get("times"))])
    if memory.get("rated", True):
        task, p = memory.get("task_type") or "unknown", f"P(q) = {_number(memory.get('p'))}"
    else:  # the rating could not change the replay, and no step read a decision pattern
        task, p = "not rated (no step needed it)", "P(q) not asked, taken as 0"
    line = (f"**Task type:** {task} · **C(q)** = {_number(memory.get('complexity'))} "
            f"({p}, E(q) = {_number(memory.get('e'))} bits) · "
            f"replayed up to **k_s = {memory.get('k_s', 0)}** semantic and "
            f"**k_p = {memory.get('k_p', 0)}** procedural memories")
    if not rows:
        line += ("\n\nNothing was replayed: no stored memory was similar enough to this question "
                 "(memory starts empty and grows with every validated answer).")
    weights = memory.get("parametric") or {}
    if weights:
        backed = (f"agrees with checked fact `{weights['agreed']}`" if weights.get("agreed")
                  else "backed by no live checked fact for this question")
        line += (f"\n\n**From the model's weights** (distilled {weights.get('distilled_at')}): "
                 f"“{weights.get('answer')}”, p = {_number(weights.get('p'))}, {backed}; "
                 + ("it decided the answer." if weights.get("decided") else "shown, not used."))
    learned = memory.get("learned") or {}
    if learned.get("verdict"):
        line += f"\n\n**Learned from this answer:** {_learned_note(learned)}"
    return {"headers": headers, "data": rows}, line


def _learned_note(learned: Mapping) -> str:
    verdict = learned["verdict"]
    reason = f" ({learned['reason']})" if learned.get("reason") else ""
    if verdict == "valid":
        stored = "merged into" if learned.get("merged") else "stored as"
        note = f"validated, {stored} `{learned.get('entry_id')}`" if learned.get("entry_id") \
            else "validated"
        if learned.get("workflow_id"):
            note += f"; workflow `{learned['workflow_id']}`"
        return note + reason
    if verdict == "invalid":
        return f"not stored, judged invalid{reason}"
    return f"skipped{reason}"


def _shorten(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MEMORY_TEXT_CHARS else text[:MEMORY_TEXT_CHARS - 1] + "…"


def replay_panel(answer: Mapping | None, counts: Sequence[Mapping]) -> go.Figure:
    """Replay counts (MemoryStore.replay_counts()) with this answer's replayed entries picked out."""
    replayed = ((answer or {}).get("memory") or {}).get("replayed") or []
    return figures.replay_figure(counts, {str(item["id"]) for item in replayed if "id" in item})


def tree_panel(answer: Mapping) -> go.Figure:
    return figures.tree_figure(answer.get("tree") or [], answer.get("chosen_leaves") or [])


GRAPH_TITLE = "What the answer drew on in the knowledge graph"
NO_GRAPH = ("This video has no knowledge graph yet: it was ingested before graphs existed, and "
            "showing it in the library builds one.")


def graph_panel(entry: VideoEntry, answer: Mapping | None) -> go.Figure:
    """The question's seeded nodes, the answer's objects and their neighbours at its times;
    before any answer, the video's whole graph."""
    with read_only(entry) as db:
        if not has_graph(db):
            return figures.empty_figure(GRAPH_TITLE, NO_GRAPH)
        if answer is None:
            return graph_figure.graph_figure(
                to_networkx(db), title="The knowledge graph of this video",
                empty="Ingest found nothing to put in this video's knowledge graph.")
        question = answer.get("standalone_question") or answer.get("question") or ""
        seeds = GraphIndex(db).seeds(question)
        used = answer_subgraph(db, list(seeds), answer.get("instance_ids") or [],
                               answer.get("times") or [])
    return graph_figure.graph_figure(
        used, seeds, title=GRAPH_TITLE,
        empty="The question names nothing in this video's knowledge graph and the answer cites "
              "no tracked object.")
