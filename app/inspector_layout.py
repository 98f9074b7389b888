"""The Memory inspector tab's layout: long-term memory, the knowledge graph and read-only SQL.

Kept apart from app/layout.py, which lays out the rest of the page in the same way: builders
only place components (inside `gr.Blocks`, in page order); app/ui.py wires them.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from app import inspector
from backend.graph.schema import RELATIONS
from backend.schema import TABLES


@dataclass
class InspectorArea:
    """Long-term memory: browse or search one kind, see or delete one entry."""

    kind: gr.Radio
    this_video: gr.Checkbox
    query: gr.Textbox
    show: gr.Button
    status: gr.Markdown
    table: gr.Dataframe
    entry_id: gr.Textbox
    entry_detail: gr.Markdown
    delete_entry: gr.Button


@dataclass
class GraphArea:
    """The knowledge graph of the selected video or of the library: figure and edge table; for
    one video, a person's edits to its edges and the list of changes to it."""

    scope: gr.Radio
    relation: gr.Dropdown
    kind: gr.Dropdown
    show: gr.Button
    status: gr.Markdown
    plot: gr.Plot
    edges: gr.Dataframe
    edge_id: gr.Number
    delete: gr.Button
    new_relation: gr.Dropdown
    confidence: gr.Number
    correct: gr.Button
    edit_status: gr.Markdown
    changes: gr.Dataframe


@dataclass
class SqlArea:
    table_pick: gr.Dropdown
    statement: gr.Code
    run: gr.Button
    status: gr.Markdown
    result: gr.Dataframe


def inspector_area() -> InspectorArea:
    with gr.Row():
        with gr.Column(scale=2, elem_classes="mr-card"):
            gr.Markdown("### Long-term memory\nSemantic memory holds validated answers about one "
                        "video; procedural memory holds tool workflows shared by all videos, and "
                        "patterns summarise them per task type; episodic memory is the video's "
                        "own multi-scale descriptions.")
            with gr.Row():
                kind = gr.Radio(list(inspector.KINDS), value="Semantic", label="Memory",
                                elem_id="memory-kind")
                this_video = gr.Checkbox(True, label="Only the selected video")
            with gr.Row():
                query = gr.Textbox(label="Search by meaning (empty lists all)", scale=4,
                                   elem_id="memory-query")
                show = gr.Button("Show", variant="primary", scale=1, elem_id="memory-show")
            status = gr.Markdown()
            table = gr.Dataframe(interactive=False, wrap=True, elem_id="memory-browser")
        with gr.Column(scale=1, elem_classes="mr-card"):
            gr.Markdown("### Selected entry")
            entry_id = gr.Textbox(label="Entry id", interactive=False, elem_id="entry-id")
            entry_detail = gr.Markdown()
            delete_entry = gr.Button("Delete this memory", variant="stop", size="sm")
    return InspectorArea(kind, this_video, query, show, status, table, entry_id, entry_detail,
                         delete_entry)


def graph_area() -> GraphArea:
    with gr.Column(elem_classes="mr-card"):
        gr.Markdown("### Knowledge graph\nWhat ingest linked: objects, their kinds, places, "
                    "shots, speakers, topics and on-screen text. Hover a node for its times and "
                    "segments, a line's midpoint for its relations.")
        with gr.Row():
            scope = gr.Radio(list(inspector.GRAPH_SCOPES), value=inspector.GRAPH_SCOPES[0],
                             label="Graph of", elem_id="graph-scope")
            relation = gr.Dropdown(list(inspector.GRAPH_RELATIONS), value=inspector.ANY,
                                   label="Relation", elem_id="graph-relation")
            kind = gr.Dropdown(list(inspector.GRAPH_KINDS), value=inspector.ANY,
                               label="Touching a node of kind", elem_id="graph-kind")
            show = gr.Button("Show", variant="primary", elem_id="graph-show")
        status = gr.Markdown()
        plot = gr.Plot(label="Knowledge graph", elem_id="graph-browser")
        edges = gr.Dataframe(interactive=False, wrap=True, elem_id="graph-edges")
        gr.Markdown("#### Edit an edge of this video's graph\nName it by its id (clicking a row "
                    "of the table fills it in). Later answers and rebuilds of the graph keep "
                    "what you delete deleted and what you correct corrected.")
        with gr.Row():
            edge_id = gr.Number(label="Edge id", precision=0, elem_id="graph-edge-id")
            delete = gr.Button("Delete this edge", variant="stop", elem_id="graph-delete")
        with gr.Row():
            new_relation = gr.Dropdown(list(RELATIONS), value=None, label="New relation",
                                       elem_id="graph-new-relation")
            # No bounds on the number: out of range, the edit's own message says what is allowed.
            confidence = gr.Number(label="New confidence (0 to 1)", elem_id="graph-confidence")
            correct = gr.Button("Correct this edge", elem_id="graph-correct")
        edit_status = gr.Markdown(elem_id="graph-edit-status")
        gr.Markdown("#### Changes\nNewest first: the answers (by semantic memory entry id, "
                    "listed above) that added or replaced a fact, and the edits people made.")
        changes = gr.Dataframe(interactive=False, wrap=True, elem_id="graph-changes")
    return GraphArea(scope, relation, kind, show, status, plot, edges, edge_id, delete,
                     new_relation, confidence, correct, edit_status, changes)


def sql_area() -> SqlArea:
    with gr.Column(elem_classes="mr-card"):
        gr.Markdown("### The video's tables (read-only SQL)\nThe same runner the agent uses: "
                    "SELECT only, time and row limits.")
        with gr.Row():
            table_pick = gr.Dropdown(list(TABLES), value="instances", label="Table", scale=1)
            statement = gr.Code("SELECT * FROM instances", language="sql", label="SQL", lines=3,
                                interactive=True, elem_id="sql")
        run = gr.Button("Run", variant="primary", elem_id="sql-run")
        status = gr.Markdown()
        result = gr.Dataframe(interactive=False, wrap=True, elem_id="sql-result")
    return SqlArea(table_pick, statement, run, status, result)
