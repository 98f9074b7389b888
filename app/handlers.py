"""What the page's events do, as plain functions of their inputs: no layout here.

A handler's arguments are the values of its event's input components, in order; the session's
settings (`prefs`) are one of them, so each reads and can be called without the page. Every
handler is wrapped by `friendly`, so failures reach the page as readable messages.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import gradio as gr

from app import answer_view, chat, downloads, folder_import, graph_edits, inspector, session, views
from app.api import answer_library, answer_question, delete_video, ingest_upload
from app.errors import friendly
from app.layout import NO_VIDEO, AnswerPanels
from backend.config import Settings
from backend.errors import InputError, NotFoundError
from backend import library_search
from backend.library import Library
from backend.suggest import suggest

_EMPTY = {"headers": [], "data": []}
_PANELS = len(fields(AnswerPanels))
_LIBRARY_OUTPUTS = 4  # what library_view returns: cards, chooser, note, ids


def show_video(video_id: str | None, settings: Settings) -> tuple:
    """The player, facts, found-evidence tables and suggested questions for one video."""
    if not video_id:
        return None, NO_VIDEO, _EMPTY, _EMPTY, _EMPTY, gr.Dataset(samples=[])
    s = views.summary(Library(settings.home).get(video_id))
    return (s["video"], s["facts"], s["instances"], s["speech"], s["ocr"],
            gr.Dataset(samples=[[q] for q in s["suggestions"]]))


def library_view(settings: Settings, selected: str | None = None, query: str = "",
                 sort: str = "newest") -> tuple:
    """(cards, chooser, note, ids) for the library as it is now: the cards the videos that
    match `query` (name, kinds, actions, picture labels, words said or shown) in `sort` order, the chooser every video."""
    entries = Library(settings.home).list()  # read once: a library may hold hundreds
    shown = library_search.find(entries, query or "", sort or "newest")
    return (gr.Dataset(samples=views.library_rows(shown)),
            gr.update(choices=views.library_choices(entries), value=selected),
            views.library_note(entries, shown, query or ""), [e.video_id for e in shown])


@friendly
def on_library_search(prefs, query, sort):
    """The cards narrowed and sorted; the chooser and the selected video stay as they are."""
    cards, _, note, ids = library_view(prefs, None, query, sort)
    return cards, gr.skip(), note, ids


@friendly
def on_upload(file_path, prefs, query="", sort="newest", progress=gr.Progress()):
    progress(0, desc="Checking the file")
    try:
        result = ingest_upload(file_path, prefs,
                               lambda text, fraction: progress(fraction, desc=text))
    except InputError as e:
        # The file is refused by name in the upload's own status line; the library is as it was.
        return (None, f"⚠ {e}", *[gr.skip()] * _LIBRARY_OUTPUTS)
    counts = result.counts
    done = ("was already in the library" if result.cached else
            f"ingested in {result.seconds['total']:.0f} s: {counts.get('instances', 0)} "
            f"tracked objects, {counts.get('speech', 0)} speech segments, "
            f"{counts.get('ocr', 0)} text reads")
    return (None, f"✓ **{result.name}** {done}.",
            *library_view(prefs, result.video_id, query, sort))


@friendly
def on_import(prefs, query="", sort="newest", progress=gr.Progress()):
    """Every video in the server's import folder (never a path from the page), then the
    summary, the folder's list and the library as they are now."""
    progress(0, desc="Reading the server folder")
    summary = folder_import.import_all(prefs, lambda fraction, text: progress(fraction, desc=text))
    return (folder_import.describe(summary, prefs), folder_import.listing(prefs),
            *library_view(prefs, None, query, sort))


@friendly
def on_select_card(index, ids):
    return ids[index] if index is not None and index < len(ids) else gr.skip()


@friendly
def on_video(video_id, prefs, scope=chat.THIS_VIDEO, turns_now=None, selected=None):
    """A newly selected video: its summary, the delete prompt closed, a new chat, empty panels.
    A chat across the library goes on (a chip in it may have picked the video), its panels now
    showing the picked video where the answer names it."""
    if scope == chat.ALL_VIDEOS and turns_now:
        kept = (gr.skip(), gr.skip(), gr.skip(),
                *answer_view.render(prefs, turns_now, selected, video_id))
    else:
        kept = ([], [], None, *answer_view.render(prefs, [], None, video_id))
    return (*show_video(video_id, prefs), gr.update(visible=False), *kept)


@friendly
def on_chip_video(text):
    """The video of a library chip static/app.js reports ('<video_id> <click count>': the count
    makes a second click on one chip a change too), for the library's chooser."""
    return text.split()[0] if text and text.strip() else gr.skip()


@friendly
def on_video_exports(video_id, prefs, request: gr.Request):
    """The selected video's downloads (transcript, tracks, graph, in the order of
    ExportArea.video_buttons), and none for an answer: a new video starts a new chat."""
    cleared = [_download(None)] * 2
    if not video_id:
        return (*cleared, *[_download(None)] * 4)
    entry = Library(prefs.home).get(video_id)
    files = downloads.video_files(entry, downloads.session_folder(request))
    return (*cleared, *[_download(path) for path in files.values()])


@friendly
def on_answer_exports(turns_now, selected, prefs, request: gr.Request):
    """The selected answer's downloads (Markdown zip, JSON); none before an answer or when its
    video has been deleted."""
    if selected is None or not turns_now:
        return _download(None), _download(None)
    answer = turns_now[selected]["answer"]
    try:
        entry = Library(prefs.home).get(answer["video_id"])
    except NotFoundError:
        return _download(None), _download(None)
    files = downloads.answer_files(answer, entry, downloads.session_folder(request), selected + 1)
    return tuple(_download(path) for path in files)


def _download(path) -> dict:
    return gr.update(value=None if path is None else str(path), interactive=path is not None)


@friendly
def on_delete_request(video_id, prefs):
    if not video_id:
        raise gr.Error("Select a video to delete first.")
    name = Library(prefs.home).get(video_id).name
    return gr.update(visible=True), (f"Delete **{name}**, its tables and its memories? "
                                     "Learned workflows stay.")


@friendly
def on_delete(video_id, prefs, query="", sort="newest"):
    message = delete_video(video_id, prefs)
    return (gr.update(visible=False), message, *library_view(prefs, None, query, sort))


@friendly
def on_ask(video_id, question_text, options_text, messages, turns_now, prefs,
           scope=chat.THIS_VIDEO):
    try:
        chat.check_ask(video_id, question_text or "", options_text or "",
                       across_library=scope == chat.ALL_VIDEOS)
    except InputError as e:
        # One message under the question, where the user looks; the chat, the question and
        # every panel stay as they were (an error would mark each of them).
        yield (*[gr.skip()] * (5 + _PANELS), f"⚠ {e}")
        return
    cleared = False  # empty the question and options once, then leave them to the user
    for messages_now, turns_next, selected in chat.converse(
            video_id, question_text or "", options_text or "", messages or [],
            turns_now or [], prefs, across_library=scope == chat.ALL_VIDEOS):
        blank = gr.skip() if cleared else ""
        # The panels follow the answer as soon as it is there, not after learning.
        panels = [gr.skip()] * _PANELS if selected is None else \
            answer_view.render(prefs, turns_next, selected, video_id)
        yield (messages_now, turns_next, gr.skip() if selected is None else selected,
               blank, blank, *panels, "")
        cleared = True


@friendly
def on_panels(turns_now, selected, prefs, video_id=None):
    return answer_view.render(prefs, turns_now or [], selected, video_id)


@friendly
def on_chat_select(turns_now, evt: gr.SelectData):
    index = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
    found = chat.turn_at(turns_now or [], index)
    return gr.skip() if found is None else found


@friendly
def on_clear(video_id, prefs):
    """A new chat about the same video."""
    return ([], [], None, *answer_view.render(prefs, [], None, video_id))


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
def on_graph(prefs, video_id, scope, relation, kind):
    """The graph's figure, edge table and note, then its changes and their note."""
    return _graph_view(prefs, video_id, scope, relation, kind)


@friendly
def on_edge_pick(evt: gr.SelectData):
    return evt.row_value[0]


@friendly
def on_graph_delete(prefs, video_id, scope, relation, kind, edge_id):
    message = graph_edits.delete(prefs, video_id, scope, edge_id)
    return _graph_view(prefs, video_id, scope, relation, kind, message)


@friendly
def on_graph_correct(prefs, video_id, scope, relation, kind, edge_id, new_relation, confidence):
    message = graph_edits.correct(prefs, video_id, scope, edge_id, new_relation, confidence)
    return _graph_view(prefs, video_id, scope, relation, kind, message)


def _graph_view(prefs, video_id, scope, relation, kind, done: str = "") -> tuple:
    shown = inspector.graph(prefs, video_id, scope, relation, kind)
    table, note = graph_edits.changes(prefs, video_id, scope)
    return (*shown, table, f"✓ {done}" if done else note)


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


@dataclass
class Endpoints:
    """The gradio_client endpoints: they have no session, so they use the server's settings."""

    settings: Settings

    @friendly
    def ingest(self, file_path):
        """Ingest a video file into the library; returns video_id, name, cached, counts, seconds."""
        return ingest_upload(file_path, self.settings).as_dict()

    @friendly
    def suggest(self, video_id):
        """Questions to try on a library video, from what ingest found in it."""
        return suggest(Library(self.settings.home).get(video_id).db_path)

    @friendly
    def ask(self, video_id, question_text, options_text):
        """Answer a question about a library video; returns the answer with its evidence and trace."""
        return answer_question(video_id, question_text, options_text, self.settings)

    @friendly
    def ask_library(self, question_text, options_text):
        """Answer a question across every library video; `videos` in the answer names each
        video it speaks of, with times."""
        return answer_library(question_text, options_text, self.settings).as_dict()
