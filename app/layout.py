"""The page's layout, one builder per area: each lays out its components and returns them.

Builders only place components (they must run inside `gr.Blocks`, in page order); what the
components do is wired in `app/ui.py` and done in `app/handlers.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import gradio as gr

from app import answer_view, chat, session
from app.inspector_layout import (GraphArea, InspectorArea, SqlArea, graph_area, inspector_area,
                                  sql_area)
from app.uploads import path_only
from backend import config
from backend.inputs import MAX_SOLUTIONS, MIN_SOLUTIONS
from backend import library_search
from backend.library import VIDEO_EXTENSIONS

NO_VIDEO = "Pick a video from the library, or upload one."


@dataclass
class SessionState:
    """Per browser tab: its settings, chat turns, the turn whose panels show, library order."""

    prefs: gr.State
    turns: gr.State
    selected_turn: gr.State
    library_ids: gr.State


@dataclass
class ImportArea:
    """Importing every video in the server's folder (MEMORYREEL_IMPORT_DIR); hidden without it."""

    box: gr.Group
    listing: gr.Markdown
    button: gr.Button
    status: gr.Markdown


@dataclass
class LibraryArea:
    note: gr.Markdown
    search: gr.Textbox
    sort: gr.Dropdown
    cards: gr.Dataset
    chooser: gr.Dropdown
    delete_button: gr.Button
    confirm_box: gr.Group
    confirm_text: gr.Markdown
    confirm_delete: gr.Button
    cancel_delete: gr.Button
    upload: gr.File
    status: gr.Markdown
    importer: ImportArea


@dataclass
class PlayerArea:
    """The player and what ingest found in the selected video."""

    player: gr.Video
    facts: gr.Markdown
    instances: gr.Dataframe
    speech: gr.Dataframe
    ocr: gr.Dataframe


@dataclass
class ChatArea:
    chatbot: gr.Chatbot
    scope: gr.Radio
    question: gr.Textbox
    options: gr.Textbox
    ask_button: gr.Button
    clear_button: gr.Button
    note: gr.Markdown  # what is wrong with a question that could not be asked
    suggestions: gr.Dataset
    # Hidden: static/app.js writes the video of a clicked library chip here to select it.
    chip_video: gr.Textbox


@dataclass
class AnswerPanels:
    """The selected answer, explained; fields in the order `answer_view.render` fills them."""

    header: gr.HTML
    evidence_frames: gr.Gallery
    timeline: gr.Plot
    memory_note: gr.Markdown
    memory_table: gr.Dataframe
    replay_plot: gr.Plot
    tree_plot: gr.Plot
    graph_plot: gr.Plot
    evidence_table: gr.Dataframe
    cost_note: gr.Markdown

    def outputs(self) -> list:
        return [getattr(self, f.name) for f in fields(self)]


@dataclass
class ExportArea:
    """Download buttons: the selected answer, and the selected video's tables as files."""

    answer_md: gr.DownloadButton
    answer_json: gr.DownloadButton
    transcript_srt: gr.DownloadButton
    transcript_vtt: gr.DownloadButton
    tracks_csv: gr.DownloadButton
    graph_graphml: gr.DownloadButton

    def answer_buttons(self) -> list:
        return [self.answer_md, self.answer_json]

    def video_buttons(self) -> list:
        """In the order of backend.exports.VIDEO_FORMATS."""
        return [self.transcript_srt, self.transcript_vtt, self.tracks_csv, self.graph_graphml]


@dataclass
class SettingsArea:
    note: gr.Markdown
    base_url: gr.Textbox
    model: gr.Textbox
    api_key: gr.Textbox
    n_solutions: gr.Slider
    memory_on: gr.Checkbox
    save: gr.Button
    test: gr.Button
    connection: gr.Markdown

    def inputs(self) -> list:
        """What `session.with_choices` takes after the session's settings."""
        return [self.base_url, self.model, self.api_key, self.n_solutions, self.memory_on]


@dataclass
class ApiArea:
    """Hidden inputs and outputs of the gradio_client endpoints (ingest, suggest, ask,
    ask_library)."""

    file: gr.File
    ingest_result: gr.JSON
    video: gr.Textbox
    question: gr.Textbox
    options: gr.Textbox
    answer: gr.JSON
    suggestions: gr.JSON
    suggest_button: gr.Button
    ingest_button: gr.Button
    ask_button: gr.Button
    ask_library_button: gr.Button


@dataclass
class Page:
    state: SessionState
    library: LibraryArea
    player: PlayerArea
    chat: ChatArea
    panels: AnswerPanels
    exports: ExportArea
    inspector: InspectorArea
    graph: GraphArea
    sql: SqlArea
    settings: SettingsArea
    api: ApiArea


def page(settings: config.Settings) -> Page:
    """Every area, laid out in page order: the Chat, Memory inspector and Settings tabs, then
    the API endpoints' hidden components."""
    state = session_state(settings)
    gr.HTML("<div class='mr-header'><div class='mr-logo'>◉</div><div><h1>MemoryReel</h1>"
            "<p>Ask a video anything, and see why the answer came out as it did.</p></div></div>")
    with gr.Tabs(elem_id="main-tabs"):
        with gr.Tab("Chat", id="chat-tab"):
            with gr.Row(equal_height=False):
                library = library_area(settings)
                player = player_area()
                chat = chat_area()
            panels = answer_panels()
            exports = export_area()
        with gr.Tab("Memory inspector", id="inspector-tab"):
            memory = inspector_area()
            graph = graph_area()
            sql = sql_area()
        with gr.Tab("Settings", id="settings-tab"):
            settings_area_ = settings_area(settings)
    return Page(state, library, player, chat, panels, exports, memory, graph, sql,
                settings_area_, api_area())


def session_state(settings: config.Settings) -> SessionState:
    return SessionState(prefs=gr.State(settings), turns=gr.State([]), selected_turn=gr.State(None),
                        library_ids=gr.State([]))


def library_area(settings: config.Settings) -> LibraryArea:
    with gr.Column(scale=1, min_width=270, elem_classes="mr-card"):
        gr.Markdown("### Library")
        note = gr.Markdown(elem_classes="mr-subtle", elem_id="library-note")
        # Stacked: the column is too narrow for a search box and a sort side by side.
        search = gr.Textbox(show_label=False, placeholder="Search by name, kinds, words",
                            elem_id="library-search")
        sort = gr.Dropdown([(f"sort: {name}", name) for name in library_search.SORTS],
                           value="newest", show_label=False, elem_id="library-sort")
        cards = gr.Dataset(components=["image", "markdown"], headers=["", "video"], samples=[],
                           type="index", layout="table", show_label=False, samples_per_page=6,
                           elem_id="library")
        chooser = gr.Dropdown(label="Selected video", choices=[], value=None, interactive=True,
                              elem_id="video-select")
        with gr.Row():
            delete_button = gr.Button("Delete video…", size="sm", variant="stop",
                                      elem_id="delete-video")
        with gr.Group(visible=False, elem_classes="mr-confirm") as confirm_box:
            confirm_text = gr.Markdown()
            with gr.Row():
                confirm_delete = gr.Button("Delete", variant="stop", size="sm",
                                           elem_id="confirm-delete")
                cancel_delete = gr.Button("Keep it", size="sm")
        gr.Markdown("### Add a video")
        upload = path_only(gr.File(label=f"Drop a video (up to {settings.max_upload_mb} MiB)",
                                   file_types=sorted(VIDEO_EXTENSIONS), type="filepath",
                                   elem_id="upload", height=120))
        status = gr.Markdown(elem_id="ingest-status")
        importer = import_area(settings)
    return LibraryArea(note, search, sort, cards, chooser, delete_button, confirm_box, confirm_text,
                       confirm_delete, cancel_delete, upload, status, importer)


def import_area(settings: config.Settings) -> ImportArea:
    with gr.Group(visible=bool(settings.import_dir), elem_id="import-folder") as box:
        gr.Markdown("### Import from the server folder")
        listing = gr.Markdown(elem_classes="mr-subtle", elem_id="import-list")
        button = gr.Button("Import them all", size="sm", elem_id="import-all")
        status = gr.Markdown(elem_id="import-status")
    return ImportArea(box, listing, button, status)


def player_area() -> PlayerArea:
    with gr.Column(scale=2, min_width=360, elem_classes="mr-card"):
        player = gr.Video(label="Player", interactive=False, height=340, elem_id="player",
                          autoplay=False)
        facts = gr.Markdown(NO_VIDEO, elem_id="facts")
        with gr.Accordion("What ingest found in this video", open=False):
            instances = gr.Dataframe(label="Tracked objects", interactive=False, wrap=True,
                                     elem_id="instances")
            speech = gr.Dataframe(label="Speech", interactive=False, wrap=True)
            ocr = gr.Dataframe(label="On-screen text", interactive=False, wrap=True)
    return PlayerArea(player, facts, instances, speech, ocr)


def chat_area() -> ChatArea:
    with gr.Column(scale=2, min_width=360, elem_classes="mr-card"):
        chatbot = gr.Chatbot(label="Chat", height=430, elem_id="chat", layout="bubble",
                             feedback_options=None, buttons=["copy"],
                             placeholder="**Ask about the selected video, or across all videos.**<br>"
                             "Evidence times in answers are buttons: click one "
                             "to play the video from there.")
        scope = gr.Radio(list(chat.SCOPES), value=chat.THIS_VIDEO, show_label=False,
                         elem_id="chat-scope")
        question = gr.Textbox(show_label=False, lines=1, max_lines=4,
                              placeholder=chat.SCOPES[chat.THIS_VIDEO], elem_id="question",
                              submit_btn=False)
        with gr.Accordion("Multiple choice (optional)", open=False):
            options = gr.Textbox(label="Options, one per line", lines=3, elem_id="options",
                                 placeholder="Leave empty for an open question")
        with gr.Row():
            ask_button = gr.Button("Ask", variant="primary", elem_id="ask", scale=3)
            clear_button = gr.Button("New chat", scale=1)
        note = gr.Markdown("", elem_id="ask-note")
        # Filled from the selected video's evidence (backend/suggest.py).
        suggestions = gr.Dataset(components=["textbox"], samples=[], label="Try", type="values",
                                 elem_id="suggestions")
        chip_video = gr.Textbox(visible="hidden", elem_id="chip-video")
    return ChatArea(chatbot, scope, question, options, ask_button, clear_button, note,
                    suggestions, chip_video)


def answer_panels() -> AnswerPanels:
    with gr.Column(elem_classes="mr-card", elem_id="answer-panels"):
        header = gr.HTML(answer_view.EMPTY_HEADER, elem_id="answer-header")
        with gr.Tabs():
            with gr.Tab("Tracked objects", id="tracked", elem_id="tab-tracked"):
                frames = gr.Gallery(label="Key frames at the evidence times", columns=4,
                                    height=300, object_fit="contain", elem_id="evidence-frames")
                timeline = gr.Plot(label="When each object is in view", elem_id="timeline")
            with gr.Tab("Retrieved memories", id="memories", elem_id="tab-memories"):
                memory_note = gr.Markdown(elem_id="memory-note")
                memory_table = gr.Dataframe(interactive=False, wrap=True, elem_id="memory-table")
            with gr.Tab("Replay counts", id="replays", elem_id="tab-replays"):
                replay_plot = gr.Plot(label="How often each memory was replayed",
                                      elem_id="replay-plot")
            with gr.Tab("Planner tree", id="tree", elem_id="tab-tree"):
                tree_plot = gr.Plot(label="Monte Carlo tree search", elem_id="tree-plot")
            with gr.Tab("Graph", id="graph", elem_id="tab-graph"):
                graph_plot = gr.Plot(label="The knowledge graph the answer drew on",
                                     elem_id="graph-plot")
            with gr.Tab("Evidence and cost", id="evidence", elem_id="tab-evidence"):
                evidence_table = gr.Dataframe(interactive=False, wrap=True,
                                              elem_id="evidence-table")
                cost_note = gr.Markdown()
    return AnswerPanels(header, frames, timeline, memory_note, memory_table, replay_plot,
                        tree_plot, graph_plot, evidence_table, cost_note)


def export_area() -> ExportArea:
    """Disabled until there is something to download (app/downloads.py writes the files)."""
    def button(label: str, elem_id: str) -> gr.DownloadButton:
        return gr.DownloadButton(label, interactive=False, size="sm", elem_id=elem_id)

    with gr.Column(elem_classes="mr-card", elem_id="exports"):
        gr.Markdown("### Downloads")
        with gr.Row():
            answer = [button("Answer: Markdown and key frames (.zip)", "export-answer-md"),
                      button("Answer: JSON", "export-answer-json")]
        with gr.Row():
            video = [button("Transcript (SRT)", "export-srt"),
                     button("Transcript (WebVTT)", "export-vtt"),
                     button("Tracks (CSV)", "export-csv"),
                     button("Knowledge graph (GraphML)", "export-graphml")]
    return ExportArea(*answer, *video)


def settings_area(settings: config.Settings) -> SettingsArea:
    with gr.Column(elem_classes="mr-card"):
        gr.Markdown("### This session's settings\nDefaults come from the server's environment "
                    "(`MEMORYREEL_*`); changes here apply to this browser tab only.")
        note = gr.Markdown(session.describe(settings), elem_id="settings-note")
        base_url = gr.Textbox(settings.llm_base_url, label="LLM base URL",
                              placeholder="empty = the embedded llama.cpp server; "
                              "e.g. http://localhost:11434/v1", elem_id="llm-url")
        with gr.Row():
            model = gr.Textbox(settings.llm_model, label="Model")
            api_key = gr.Textbox("", label="API key", type="password",
                                 placeholder="empty = keep the current key")
        with gr.Row():
            n_solutions = gr.Slider(MIN_SOLUTIONS, MAX_SOLUTIONS, value=settings.n_solutions,
                                    step=1, label="Candidate answers (N solutions)")
            memory_on = gr.Checkbox(settings.memory, label="Memory on: replay and learn")
        with gr.Row():
            save = gr.Button("Save for this session", variant="primary", elem_id="settings-save")
            test = gr.Button("Test connection", elem_id="settings-test")
        connection = gr.Markdown(elem_id="connection")
    return SettingsArea(note, base_url, model, api_key, n_solutions, memory_on, save, test,
                        connection)


def api_area() -> ApiArea:
    """No widgets of their own on the page: gradio_client calls these endpoints by name."""
    with gr.Column(visible=False):
        return ApiArea(
            file=path_only(gr.File(label="video")), ingest_result=gr.JSON(),
            video=gr.Textbox(label="video_id"), question=gr.Textbox(label="question"),
            options=gr.Textbox(label="options (one per line or '|'-separated; empty = open)"),
            answer=gr.JSON(), suggestions=gr.JSON(), suggest_button=gr.Button(),
            ingest_button=gr.Button(), ask_button=gr.Button(), ask_library_button=gr.Button())
