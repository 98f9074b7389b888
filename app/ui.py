"""The Gradio page: its areas (app/layout.py) wired to what they do (app/handlers.py); launch.

Library, player and chat; per-answer panels; memory inspector; settings; the API endpoints.
The session's settings, chat and answers live in gr.State, one copy per browser tab.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import secrets
from pathlib import Path

import gradio as gr
from starlette.middleware import Middleware

from app import chat, downloads, folder_import, handlers, inspector, layout
from app.errors import friendly
from app.login_page import NoApiInfoBeforeLogin
from app.login_wall import LoginWall
from app.media_route import MediaOnlyUnderHome
from app.uploads import RecordUploads
from backend import config, warm_up
from backend.library import Library


log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parents[1] / "static"
# Answers share one LLM server; ingest is CPU-bound. Two answers at once keep the queue moving
# without starving an ingest of the two cores this is built for.
ANSWER_CONCURRENCY = 2
INGEST_CONCURRENCY = 1
LOGIN_USER = "memoryreel"


def build(settings: config.Settings | None = None) -> gr.Blocks:
    settings = settings or config.load()
    # Uploads are removed once ingested or rejected (app/uploads.py); whatever else lands in
    # Gradio's cache (key frames, figures, uploads never ingested) is swept hourly and when the
    # server restarts.
    with gr.Blocks(title="MemoryReel", delete_cache=(3600, 3600)) as demo:
        page = layout.page(settings)
        _wire_library(demo, page, settings)
        _wire_chat(page)
        _wire_inspector(page)
        _wire_settings(page)
        _wire_api(page.api, handlers.Endpoints(settings))
        demo.unload(downloads.forget)
    return demo


def _wire_library(demo: gr.Blocks, page: layout.Page, settings: config.Settings) -> None:
    """Uploading, importing the server's folder, picking and deleting videos; picking one shows
    it and starts a new chat (unless the chat is across the library)."""
    lib, state = page.library, page.state
    library_outputs = [lib.cards, lib.chooser, lib.note, state.library_ids]
    demo.load(lambda: handlers.library_view(settings), outputs=library_outputs,
              api_visibility="private")
    listing = [lib.search, lib.sort]
    for change in (lib.search.change, lib.sort.change):
        change(handlers.on_library_search, inputs=[state.prefs, *listing],
               outputs=library_outputs, show_progress="hidden", api_visibility="private")
    lib.upload.upload(handlers.on_upload, inputs=[lib.upload, state.prefs, *listing],
                      outputs=[lib.upload, lib.status, *library_outputs],
                      concurrency_limit=INGEST_CONCURRENCY, concurrency_id="ingest",
                      show_progress_on=[lib.status], api_visibility="private")
    imp = lib.importer
    demo.load(lambda: folder_import.listing(settings), outputs=imp.listing,
              api_visibility="private")
    imp.button.click(handlers.on_import, inputs=[state.prefs, *listing],
                     outputs=[imp.status, imp.listing, *library_outputs],
                     concurrency_limit=INGEST_CONCURRENCY, concurrency_id="ingest",
                     show_progress_on=[imp.status], api_visibility="private")
    lib.cards.click(handlers.on_select_card, inputs=[lib.cards, state.library_ids],
                    outputs=lib.chooser, api_visibility="private")
    p = page.player
    lib.chooser.change(handlers.on_video,
                       inputs=[lib.chooser, state.prefs, page.chat.scope, state.turns,
                               state.selected_turn],
                       outputs=[p.player, p.facts, p.instances, p.speech, p.ocr,
                                page.chat.suggestions, lib.confirm_box, page.chat.chatbot,
                                state.turns, state.selected_turn, *page.panels.outputs()],
                       api_visibility="private").then(
        handlers.on_video_exports, inputs=[lib.chooser, state.prefs],
        outputs=[*page.exports.answer_buttons(), *page.exports.video_buttons()],
        api_visibility="private")
    page.chat.suggestions.click(lambda row: row[0], inputs=page.chat.suggestions,
                                outputs=page.chat.question, api_visibility="private")
    lib.delete_button.click(handlers.on_delete_request, inputs=[lib.chooser, state.prefs],
                            outputs=[lib.confirm_box, lib.confirm_text], api_visibility="private")
    lib.cancel_delete.click(lambda: gr.update(visible=False), outputs=lib.confirm_box,
                            api_visibility="private")
    lib.confirm_delete.click(handlers.on_delete, inputs=[lib.chooser, state.prefs, *listing],
                             outputs=[lib.confirm_box, lib.status, *library_outputs],
                             api_visibility="private")


def _wire_chat(page: layout.Page) -> None:
    """Asking about the selected video or across the library (the panels follow the answer),
    picking an earlier answer, a new chat; a library answer's chip picks its video."""
    c, state, panels, chooser = page.chat, page.state, page.panels.outputs(), page.library.chooser
    ask_inputs = [chooser, c.question, c.options, c.chatbot, state.turns, state.prefs, c.scope]
    ask_outputs = [c.chatbot, state.turns, state.selected_turn, c.question, c.options, *panels,
                   c.note]
    panel_inputs = [state.turns, state.selected_turn, state.prefs]
    answer_downloads = page.exports.answer_buttons()
    for trigger in (c.ask_button.click, c.question.submit):
        trigger(handlers.on_ask, inputs=ask_inputs, outputs=ask_outputs,
                concurrency_limit=ANSWER_CONCURRENCY, concurrency_id="answer",
                show_progress="minimal", api_visibility="private").then(
            handlers.on_panels, inputs=[*panel_inputs, chooser], outputs=panels,
            api_visibility="private"
        ).then(handlers.on_answer_exports, inputs=panel_inputs, outputs=answer_downloads,
               api_visibility="private")
    c.chatbot.select(handlers.on_chat_select, inputs=state.turns, outputs=state.selected_turn,
                     api_visibility="private").then(
        handlers.on_panels, inputs=[*panel_inputs, chooser], outputs=panels,
        api_visibility="private"
    ).then(handlers.on_answer_exports, inputs=panel_inputs, outputs=answer_downloads,
           api_visibility="private")
    c.clear_button.click(handlers.on_clear, inputs=[chooser, state.prefs],
                         outputs=[c.chatbot, state.turns, state.selected_turn, *panels],
                         api_visibility="private").then(
        handlers.on_answer_exports, inputs=panel_inputs, outputs=answer_downloads,
        api_visibility="private")
    c.scope.change(lambda scope: gr.update(placeholder=chat.SCOPES[scope]), inputs=c.scope,
                   outputs=c.question, api_visibility="private")
    # Its change, not input: Gradio's textbox reports input on key presses only, and this one is
    # written by static/app.js. Picking the video runs the chooser's own change event, as
    # picking it by hand does.
    c.chip_video.change(handlers.on_chip_video, inputs=c.chip_video, outputs=chooser,
                        api_visibility="private")


def _wire_inspector(page: layout.Page) -> None:
    """Browsing, searching and deleting memories; the knowledge graph of the selected video or
    of the library, and a person's edits to a video's graph; read-only SQL over the video."""
    m, prefs, chooser = page.inspector, page.state.prefs, page.library.chooser
    memory_inputs = [prefs, m.kind, chooser, m.this_video, m.query]
    for trigger in (m.show.click, m.query.submit, m.kind.change):
        trigger(friendly(inspector.memories), inputs=memory_inputs, outputs=[m.table, m.status],
                api_visibility="private")
    m.table.select(handlers.on_memory_pick, inputs=prefs, outputs=[m.entry_id, m.entry_detail],
                   api_visibility="private")
    m.delete_entry.click(handlers.on_memory_delete,
                         inputs=[prefs, m.entry_id, m.kind, chooser, m.this_video, m.query],
                         outputs=[m.entry_id, m.entry_detail, m.table, m.status],
                         api_visibility="private")
    g = page.graph
    shown = [prefs, chooser, g.scope, g.relation, g.kind]
    graph_outputs = [g.plot, g.edges, g.status, g.changes, g.edit_status]
    for trigger in (g.show.click, g.scope.change, g.relation.change, g.kind.change):
        trigger(handlers.on_graph, inputs=shown, outputs=graph_outputs, api_visibility="private")
    g.edges.select(handlers.on_edge_pick, outputs=g.edge_id, api_visibility="private")
    g.delete.click(handlers.on_graph_delete, inputs=[*shown, g.edge_id], outputs=graph_outputs,
                   api_visibility="private")
    g.correct.click(handlers.on_graph_correct,
                    inputs=[*shown, g.edge_id, g.new_relation, g.confidence],
                    outputs=graph_outputs, api_visibility="private")
    sql = page.sql
    sql.table_pick.change(lambda t: f"SELECT * FROM {t}", inputs=sql.table_pick,
                          outputs=sql.statement, api_visibility="private")
    sql.run.click(handlers.on_sql, inputs=[prefs, chooser, sql.statement],
                  outputs=[sql.result, sql.status], api_visibility="private")


def _wire_settings(page: layout.Page) -> None:
    s, prefs = page.settings, page.state.prefs
    s.save.click(handlers.on_save, inputs=[prefs, *s.inputs()], outputs=[prefs, s.note],
                 api_visibility="private")
    s.test.click(handlers.on_test, inputs=[prefs, *s.inputs()], outputs=s.connection,
                 api_visibility="private")


def _wire_api(api: layout.ApiArea, endpoints: handlers.Endpoints) -> None:
    """The named endpoints gradio_client calls: ingest, suggest, ask, ask_library."""
    api.ingest_button.click(endpoints.ingest, inputs=api.file, outputs=api.ingest_result,
                            api_name="ingest", concurrency_limit=INGEST_CONCURRENCY,
                            concurrency_id="ingest")
    api.suggest_button.click(endpoints.suggest, inputs=api.video, outputs=api.suggestions,
                             api_name="suggest")
    api.ask_button.click(endpoints.ask, inputs=[api.video, api.question, api.options],
                         outputs=api.answer, api_name="ask", concurrency_limit=ANSWER_CONCURRENCY,
                         concurrency_id="answer")
    api.ask_library_button.click(endpoints.ask_library, inputs=[api.question, api.options],
                                 outputs=api.answer, api_name="ask_library",
                                 concurrency_limit=ANSWER_CONCURRENCY, concurrency_id="answer")


def theme() -> gr.themes.Base:
    # System fonts only: the app must look right offline, where Google Fonts cannot load.
    return gr.themes.Soft(primary_hue="indigo", secondary_hue="amber", neutral_hue="slate",
                          font=["Inter", "ui-sans-serif", "system-ui", "Segoe UI", "sans-serif"],
                          font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"])


def css() -> str:
    return (STATIC / "style.css").read_text()


def js() -> str:
    return (STATIC / "app.js").read_text()


def login(settings: config.Settings) -> tuple[str, str] | None:
    """The (user, password) the server asks for, or None when it asks for none.

    MEMORYREEL_AUTH when it is set. Without it, a server that others can reach (bound beyond
    loopback, as the Docker image is, or behind a share link) still asks: user `memoryreel`
    with a password made for this run and logged once, so that a plain `docker run` is never
    open to everyone on the network.
    """
    if settings.auth:
        user, _, password = settings.auth.partition(":")
        return user, password
    if _is_loopback(settings.host) and not settings.share:
        return None
    password = secrets.token_urlsafe(18)
    reach = "a public share link" if settings.share else settings.host
    log.warning("MEMORYREEL_AUTH is not set and the app is reachable on %s: log in as user %s, "
                "password %s (made for this run; set MEMORYREEL_AUTH=user:password to choose one)",
                reach, LOGIN_USER, password)
    return LOGIN_USER, password


def _is_loopback(host: str) -> bool:
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost may resolve to anything
        return False


def launch(settings: config.Settings, *, port: int | None = None,
           prevent_thread_lock: bool = False) -> gr.Blocks:
    """Start the server as configured: localhost unless MEMORYREEL_HOST, no share link unless
    asked, a login wherever others can reach it (see `login`)."""
    # A server killed mid-ingest (kill -9, power cut) left a staging copy of the upload behind.
    Library(settings.home).clean_leftovers()
    demo = build(settings).queue(default_concurrency_limit=ANSWER_CONCURRENCY)
    start = functools.partial(
        demo.launch, server_name=settings.host, server_port=port or settings.port,
        share=settings.share, auth=login(settings), max_file_size=f"{settings.max_upload_mb}mb",
        # Only the video folders, and there only media (see media_route.py): memory, replay
        # counts, sessions, video.db and staging stay unreachable.
        allowed_paths=[str(Library(settings.home).videos_dir.resolve())],
        app_kwargs={"middleware": [Middleware(LoginWall),
                                   Middleware(MediaOnlyUnderHome, home=settings.home),
                                   Middleware(NoApiInfoBeforeLogin),
                                   Middleware(RecordUploads)]},
        theme=theme(), css=css(), js=js(), footer_links=["api"], show_error=False,
        prevent_thread_lock=True, quiet=prevent_thread_lock)
    for attempt in range(1, _LAUNCH_TRIES + 1):
        try:
            start()
            break
        except ValueError as error:
            if _NOT_ANSWERED not in str(error) or attempt == _LAUNCH_TRIES:
                raise  # the last try's error is the user's to see
            log.warning("the page did not answer within Gradio's 3 s at start (a busy machine?); "
                        "starting again (%d of %d)", attempt + 1, _LAUNCH_TRIES)
            demo.close()
    # Once the page is up (its start must not compete for the cores), the model reads its
    # prompts' openings while the user picks a video (backend/warm_up.py).
    warm_up.begin(settings)
    if not prevent_thread_lock:
        demo.block_thread()
    return demo


# Gradio asks its own page once, 3 s at most, right after starting the server; where the page is
# slower (a busy machine rendering a library of hundreds of videos: a CI run failed so) it stops
# with advice to open a public share link, which MemoryReel never does unasked. Started again
# instead.
_LAUNCH_TRIES = 3
_NOT_ANSWERED = "When localhost is not accessible"
