"""The Gradio page: library, player and chat; per-answer panels; memory inspector; settings.

Every handler is wrapped by `friendly`, so failures reach the page as readable messages. The
session's settings, chat and answers live in gr.State, one copy per browser tab.
"""

from __future__ import annotations

import logging
from pathlib import Path

import gradio as gr
from starlette.middleware import Middleware

from app import answer_view, chat, inspector, session, views
from app.api import answer_question, delete_video, ingest_upload
from app.errors import friendly
from app.media_route import MediaOnlyUnderHome
from backend import config
from backend.library import VIDEO_EXTENSIONS, Library
from backend.schema import TABLES
from backend.suggest import suggest

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parents[1] / "static"
# Answers share one LLM server; ingest is CPU-bound. Two answers at once keep the queue moving
# without starving an ingest of the two cores this is built for.
ANSWER_CONCURRENCY = 2
INGEST_CONCURRENCY = 1
_EMPTY = {"headers": [], "data": []}
_NO_VIDEO = "Pick a video from the library, or upload one."


def _show_video(video_id: str | None, settings: config.Settings) -> tuple:
    """The player, facts, found-evidence tables and suggested questions for one video."""
    if not video_id:
        return None, _NO_VIDEO, _EMPTY, _EMPTY, _EMPTY, gr.Dataset(samples=[])
    s = views.summary(Library(settings.home).get(video_id))
    return (s["video"], s["facts"], s["instances"], s["speech"], s["ocr"],
            gr.Dataset(samples=[[q] for q in s["suggestions"]]))


def build(settings: config.Settings | None = None) -> gr.Blocks:
    settings = settings or config.load()
    library = Library(settings.home)

    def library_view(selected: str | None = None) -> tuple:
        """(library_list, chooser, note, ids) for the library as it is now."""
        entries = views.newest_first(library)
        return (gr.Dataset(samples=views.library_rows(entries)),
                gr.update(choices=views.library_choices(library), value=selected),
                views.library_note(library), [e.video_id for e in entries])

    # Uploads are removed once ingested or rejected (api.ingest_upload); whatever else lands in
    # Gradio's cache (key frames, figures) is swept hourly and when the server restarts.
    with gr.Blocks(title="MemoryReel", delete_cache=(3600, 3600)) as demo:
        prefs = gr.State(settings)
        turns = gr.State([])
        selected_turn = gr.State(None)
        library_ids = gr.State([])

        gr.HTML("<div class='mr-header'><div class='mr-logo'>◉</div><div><h1>MemoryReel</h1>"
                "<p>Ask a video anything, and see why the answer came out as it did.</p></div></div>")
        with gr.Tabs(elem_id="main-tabs"):
            with gr.Tab("Chat", id="chat-tab"):
                with gr.Row(equal_height=False):
                    # --- library ---
                    with gr.Column(scale=1, min_width=270, elem_classes="mr-card"):
                        gr.Markdown("### Library")
                        library_note = gr.Markdown(elem_classes="mr-subtle")
                        library_list = gr.Dataset(components=["image", "markdown"],
                                             headers=["", "video"], samples=[], type="index",
                                             layout="table", show_label=False,
                                             samples_per_page=6, elem_id="library")
                        chooser = gr.Dropdown(label="Selected video", choices=[], value=None,
                                              interactive=True, elem_id="video-select")
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
                        upload = gr.File(label=f"Drop a video (up to {settings.max_upload_mb} MiB)",
                                         file_types=sorted(VIDEO_EXTENSIONS), type="filepath",
                                         elem_id="upload", height=120)
                        status = gr.Markdown(elem_id="ingest-status")
                    # --- player and what was found ---
                    with gr.Column(scale=2, min_width=360, elem_classes="mr-card"):
                        player = gr.Video(label="Player", interactive=False, height=340,
                                          elem_id="player", autoplay=False)
                        facts = gr.Markdown(_NO_VIDEO, elem_id="facts")
                        with gr.Accordion("What ingest found in this video", open=False):
                            instances = gr.Dataframe(label="Tracked objects", interactive=False,
                                                     wrap=True, elem_id="instances")
                            speech = gr.Dataframe(label="Speech", interactive=False, wrap=True)
                            ocr = gr.Dataframe(label="On-screen text", interactive=False, wrap=True)
                    # --- chat ---
                    with gr.Column(scale=2, min_width=360, elem_classes="mr-card"):
                        chatbot = gr.Chatbot(label="Chat", height=430, elem_id="chat",
                                             layout="bubble", feedback_options=None,
                                             buttons=["copy"],
                                             placeholder="**Ask about the selected video.**<br>"
                                             "Evidence times in answers are buttons: click one "
                                             "to play the video from there.")
                        question = gr.Textbox(show_label=False, lines=1, max_lines=4,
                                              placeholder="Ask about the selected video",
                                              elem_id="question", submit_btn=False)
                        with gr.Accordion("Multiple choice (optional)", open=False):
                            options_box = gr.Textbox(label="Options, one per line", lines=3,
                                                     elem_id="options",
                                                     placeholder="Leave empty for an open question")
                        with gr.Row():
                            ask_button = gr.Button("Ask", variant="primary", elem_id="ask", scale=3)
                            clear_button = gr.Button("New chat", scale=1)
                        # Filled from the selected video's evidence (backend/suggest.py).
                        suggestions = gr.Dataset(components=["textbox"], samples=[],
                                                 label="Try", type="values",
                                                 elem_id="suggestions")

                # --- the selected answer, explained ---
                with gr.Column(elem_classes="mr-card", elem_id="answer-panels"):
                    answer_header = gr.HTML(answer_view.EMPTY_HEADER, elem_id="answer-header")
                    with gr.Tabs():
                        with gr.Tab("Tracked objects", id="tracked", elem_id="tab-tracked"):
                            evidence_frames = gr.Gallery(label="Key frames at the evidence times",
                                                         columns=4, height=300, object_fit="contain",
                                                         elem_id="evidence-frames")
                            timeline_plot = gr.Plot(label="When each object is in view",
                                                    elem_id="timeline")
                        with gr.Tab("Retrieved memories", id="memories", elem_id="tab-memories"):
                            memory_note = gr.Markdown(elem_id="memory-note")
                            memory_table = gr.Dataframe(interactive=False, wrap=True,
                                                        elem_id="memory-table")
                        with gr.Tab("Replay counts", id="replays", elem_id="tab-replays"):
                            replay_plot = gr.Plot(label="How often each memory was replayed",
                                                  elem_id="replay-plot")
                        with gr.Tab("Planner tree", id="tree", elem_id="tab-tree"):
                            tree_plot = gr.Plot(label="Monte Carlo tree search", elem_id="tree-plot")
                        with gr.Tab("Evidence and cost", id="evidence", elem_id="tab-evidence"):
                            evidence_table = gr.Dataframe(interactive=False, wrap=True,
                                                          elem_id="evidence-table")
                            cost_note = gr.Markdown()

            with gr.Tab("Memory inspector", id="inspector-tab"):
                with gr.Row():
                    with gr.Column(scale=2, elem_classes="mr-card"):
                        gr.Markdown("### Long-term memory\nSemantic memory holds validated "
                                    "answers about one video; procedural memory holds tool "
                                    "workflows shared by all videos, and patterns summarise them "
                                    "per task type; episodic memory is the video's own "
                                    "multi-scale descriptions.")
                        with gr.Row():
                            kind = gr.Radio(list(inspector.KINDS), value="Semantic",
                                            label="Memory", elem_id="memory-kind")
                            this_video = gr.Checkbox(True, label="Only the selected video")
                        with gr.Row():
                            memory_query = gr.Textbox(label="Search by meaning (empty lists all)",
                                                      scale=4, elem_id="memory-query")
                            memory_go = gr.Button("Show", variant="primary", scale=1,
                                                  elem_id="memory-show")
                        memory_status = gr.Markdown()
                        memories = gr.Dataframe(interactive=False, wrap=True,
                                                elem_id="memory-browser")
                    with gr.Column(scale=1, elem_classes="mr-card"):
                        gr.Markdown("### Selected entry")
                        entry_id = gr.Textbox(label="Entry id", interactive=False,
                                              elem_id="entry-id")
                        entry_detail = gr.Markdown()
                        delete_entry = gr.Button("Delete this memory", variant="stop", size="sm")
                with gr.Column(elem_classes="mr-card"):
                    gr.Markdown("### The video's tables (read-only SQL)\nThe same runner the "
                                "agent uses: SELECT only, time and row limits.")
                    with gr.Row():
                        table_pick = gr.Dropdown(list(TABLES), value="instances", label="Table",
                                                 scale=1)
                        sql_box = gr.Code("SELECT * FROM instances", language="sql",
                                          label="SQL", lines=3, interactive=True, elem_id="sql")
                    sql_go = gr.Button("Run", variant="primary", elem_id="sql-run")
                    sql_status = gr.Markdown()
                    sql_result = gr.Dataframe(interactive=False, wrap=True, elem_id="sql-result")

            with gr.Tab("Settings", id="settings-tab"):
                with gr.Column(elem_classes="mr-card"):
                    gr.Markdown("### This session's settings\nDefaults come from the server's "
                                "environment (`MEMORYREEL_*`); changes here apply to this browser "
                                "tab only.")
                    settings_note = gr.Markdown(session.describe(settings), elem_id="settings-note")
                    base_url = gr.Textbox(settings.llm_base_url, label="LLM base URL",
                                          placeholder="empty = the embedded llama.cpp server; "
                                          "e.g. http://localhost:11434/v1", elem_id="llm-url")
                    with gr.Row():
                        model = gr.Textbox(settings.llm_model, label="Model")
                        api_key = gr.Textbox("", label="API key", type="password",
                                             placeholder="empty = keep the current key")
                    with gr.Row():
                        n_solutions = gr.Slider(1, 6, value=settings.n_solutions, step=1,
                                                label="Candidate answers (N solutions)")
                        memory_on = gr.Checkbox(settings.memory, label="Memory on: replay and learn")
                    with gr.Row():
                        save = gr.Button("Save for this session", variant="primary",
                                         elem_id="settings-save")
                        test = gr.Button("Test connection", elem_id="settings-test")
                    connection = gr.Markdown(elem_id="connection")

        # --- API endpoints for gradio_client (no widgets of their own on the page) ---
        with gr.Column(visible=False):
            api_file = gr.File(label="video")
            api_ingest_result = gr.JSON()
            api_video = gr.Textbox(label="video_id")
            api_question = gr.Textbox(label="question")
            api_options = gr.Textbox(label="options (one per line or '|'-separated; empty = open)")
            api_answer = gr.JSON()
            api_suggestions = gr.JSON()
            api_suggest_button = gr.Button()
            api_ingest_button = gr.Button()
            api_ask_button = gr.Button()

        # ---------------------------------------------------------------- handlers
        panel_outputs = [answer_header, evidence_frames, timeline_plot, memory_note, memory_table,
                         replay_plot, tree_plot, evidence_table, cost_note]
        summary_outputs = [player, facts, instances, speech, ocr, suggestions]

        @friendly
        def on_upload(file_path, prefs, progress=gr.Progress()):
            progress(0, desc="Checking the file")
            result = ingest_upload(file_path, prefs,
                                   lambda text, fraction: progress(fraction, desc=text))
            counts = result.counts
            done = ("was already in the library" if result.cached else
                    f"ingested in {result.seconds['total']:.0f} s: {counts.get('instances', 0)} "
                    f"tracked objects, {counts.get('speech', 0)} speech segments, "
                    f"{counts.get('ocr', 0)} text reads")
            return (None, f"✓ **{result.name}** {done}.", *library_view(result.video_id))

        @friendly
        def on_select_card(index, ids):
            return ids[index] if index is not None and index < len(ids) else gr.skip()

        @friendly
        def on_video(video_id, prefs):
            return (*_show_video(video_id, prefs), gr.update(visible=False), [], [], None,
                    *answer_view.render(prefs, [], None, video_id))

        @friendly
        def on_delete_request(video_id, prefs):
            if not video_id:
                raise gr.Error("Select a video to delete first.")
            name = Library(prefs.home).get(video_id).name
            return gr.update(visible=True), (f"Delete **{name}**, its tables and its memories? "
                                             "Learned workflows stay.")

        @friendly
        def on_delete(video_id, prefs):
            message = delete_video(video_id, prefs)
            return (gr.update(visible=False), message, *library_view(None))

        @friendly
        def on_ask(video_id, question_text, options_text, messages, turns_now, prefs):
            cleared = False  # empty the question and options once, then leave them to the user
            for messages_now, turns_next, selected in chat.converse(
                    video_id, question_text or "", options_text or "", messages or [],
                    turns_now or [], prefs):
                blank = gr.skip() if cleared else ""
                # The panels follow the answer as soon as it is there, not after learning.
                panels = [gr.skip()] * len(panel_outputs) if selected is None else \
                    answer_view.render(prefs, turns_next, selected)
                yield (messages_now, turns_next, gr.skip() if selected is None else selected,
                       blank, blank, *panels)
                cleared = True

        @friendly
        def on_panels(turns_now, selected, prefs):
            return answer_view.render(prefs, turns_now or [], selected)

        @friendly
        def on_chat_select(turns_now, evt: gr.SelectData):
            index = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
            found = chat.turn_at(turns_now or [], index)
            return gr.skip() if found is None else found

        @friendly
        def on_memory_pick(prefs, evt: gr.SelectData):
            entry = evt.row_value[0]
            return entry, inspector.entry_detail(prefs, entry)

        @friendly
        def on_memory_delete(prefs, entry, kind_label, video_id, only_this, query_text):
            message = inspector.delete_entry(prefs, entry)
            table, note = inspector.memories(prefs, kind_label, video_id, only_this, query_text)
            return "", "", table, f"{message} {note}."

        @friendly
        def on_sql(prefs, video_id, statement):
            return inspector.sql(prefs, video_id, statement)

        @friendly
        def on_save(prefs, url, model_name, key, n, memory):
            updated = session.with_choices(prefs, url, model_name, key, n, memory)
            return updated, session.describe(updated) + " ✓ saved"

        @friendly
        def on_test(prefs, url, model_name, key, n, memory):
            return session.check_connection(session.with_choices(prefs, url, model_name, key, n, memory))

        @friendly
        def api_ingest(file_path):
            """Ingest a video file into the library; returns video_id, name, cached, counts, seconds."""
            return ingest_upload(file_path, settings).as_dict()

        @friendly
        def api_suggest(video_id):
            """Questions to try on a library video, from what ingest found in it."""
            return suggest(Library(settings.home).get(video_id).db_path)

        @friendly
        def api_ask(video_id, question_text, options_text):
            """Answer a question about a library video; returns the answer with its evidence and trace."""
            return answer_question(video_id, question_text, options_text, settings)

        # ---------------------------------------------------------------- wiring
        library_outputs = [library_list, chooser, library_note, library_ids]
        demo.load(lambda: library_view(None), outputs=library_outputs, api_visibility="private")
        upload.upload(on_upload, inputs=[upload, prefs], outputs=[upload, status, *library_outputs],
                      concurrency_limit=INGEST_CONCURRENCY, concurrency_id="ingest",
                      show_progress_on=[status], api_visibility="private")
        library_list.click(on_select_card, inputs=[library_list, library_ids], outputs=chooser,
                      api_visibility="private")
        chooser.change(on_video, inputs=[chooser, prefs],
                       outputs=[*summary_outputs, confirm_box, chatbot, turns, selected_turn,
                                *panel_outputs],
                       api_visibility="private")
        suggestions.click(lambda row: row[0], inputs=suggestions, outputs=question,
                          api_visibility="private")
        delete_button.click(on_delete_request, inputs=[chooser, prefs],
                            outputs=[confirm_box, confirm_text], api_visibility="private")
        cancel_delete.click(lambda: gr.update(visible=False), outputs=confirm_box,
                            api_visibility="private")
        confirm_delete.click(on_delete, inputs=[chooser, prefs],
                             outputs=[confirm_box, status, *library_outputs],
                             api_visibility="private")

        ask_inputs = [chooser, question, options_box, chatbot, turns, prefs]
        ask_outputs = [chatbot, turns, selected_turn, question, options_box, *panel_outputs]
        for trigger in (ask_button.click, question.submit):
            trigger(on_ask, inputs=ask_inputs, outputs=ask_outputs,
                    concurrency_limit=ANSWER_CONCURRENCY, concurrency_id="answer",
                    show_progress="minimal", api_visibility="private").then(
                on_panels, inputs=[turns, selected_turn, prefs], outputs=panel_outputs,
                api_visibility="private")
        chatbot.select(on_chat_select, inputs=turns, outputs=selected_turn,
                       api_visibility="private").then(
            on_panels, inputs=[turns, selected_turn, prefs], outputs=panel_outputs,
            api_visibility="private")
        clear_button.click(friendly(lambda video_id, prefs: (
                               [], [], None, *answer_view.render(prefs, [], None, video_id))),
                           inputs=[chooser, prefs],
                           outputs=[chatbot, turns, selected_turn, *panel_outputs],
                           api_visibility="private")

        memory_inputs = [prefs, kind, chooser, this_video, memory_query]
        for trigger in (memory_go.click, memory_query.submit, kind.change):
            trigger(friendly(inspector.memories), inputs=memory_inputs,
                    outputs=[memories, memory_status],
                    api_visibility="private")
        memories.select(on_memory_pick, inputs=prefs, outputs=[entry_id, entry_detail],
                        api_visibility="private")
        delete_entry.click(on_memory_delete, inputs=[prefs, entry_id, kind, chooser, this_video,
                                                     memory_query],
                           outputs=[entry_id, entry_detail, memories, memory_status],
                           api_visibility="private")
        table_pick.change(lambda t: f"SELECT * FROM {t}", inputs=table_pick, outputs=sql_box,
                          api_visibility="private")
        sql_go.click(on_sql, inputs=[prefs, chooser, sql_box], outputs=[sql_result, sql_status],
                     api_visibility="private")

        setting_inputs = [prefs, base_url, model, api_key, n_solutions, memory_on]
        save.click(on_save, inputs=setting_inputs, outputs=[prefs, settings_note],
                   api_visibility="private")
        test.click(on_test, inputs=setting_inputs, outputs=connection, api_visibility="private")

        api_ingest_button.click(api_ingest, inputs=api_file, outputs=api_ingest_result,
                                api_name="ingest", concurrency_limit=INGEST_CONCURRENCY,
                                concurrency_id="ingest")
        api_suggest_button.click(api_suggest, inputs=api_video, outputs=api_suggestions,
                                 api_name="suggest")
        api_ask_button.click(api_ask, inputs=[api_video, api_question, api_options],
                             outputs=api_answer, api_name="ask",
                             concurrency_limit=ANSWER_CONCURRENCY, concurrency_id="answer")
    return demo


def theme() -> gr.themes.Base:
    # System fonts only: the app must look right offline, where Google Fonts cannot load.
    return gr.themes.Soft(primary_hue="indigo", secondary_hue="amber", neutral_hue="slate",
                          font=["Inter", "ui-sans-serif", "system-ui", "Segoe UI", "sans-serif"],
                          font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"])


def css() -> str:
    return (STATIC / "style.css").read_text()


def js() -> str:
    return (STATIC / "app.js").read_text()


def launch(settings: config.Settings, *, port: int | None = None,
           prevent_thread_lock: bool = False) -> gr.Blocks:
    """Start the server as configured: localhost unless MEMORYREEL_HOST, no share link unless asked."""
    user, _, password = settings.auth.partition(":")
    # A server killed mid-ingest (kill -9, power cut) left a staging copy of the upload behind.
    Library(settings.home).clean_leftovers()
    demo = build(settings).queue(default_concurrency_limit=ANSWER_CONCURRENCY)
    demo.launch(server_name=settings.host, server_port=port or settings.port, share=settings.share,
                auth=(user, password) if settings.auth else None,
                max_file_size=f"{settings.max_upload_mb}mb",
                # Only the video folders, and there only media (see media_route.py): memory,
                # replay counts, sessions, video.db and staging stay unreachable.
                allowed_paths=[str(Library(settings.home).videos_dir.resolve())],
                app_kwargs={"middleware": [Middleware(MediaOnlyUnderHome, home=settings.home)]},
                theme=theme(), css=css(), js=js(), footer_links=["api"], show_error=False,
                prevent_thread_lock=prevent_thread_lock, quiet=prevent_thread_lock)
    return demo
