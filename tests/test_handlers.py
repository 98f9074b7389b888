"""The page's event handlers called as plain functions, without a server or a browser."""

from __future__ import annotations

import gradio as gr
import pytest

from app import handlers
from app.answer_view import cost_note
from tests.conftest import settings_for

CLIP = "mot15_TUD-Campus.mp4"


def test_an_empty_library_says_how_to_start(tmp_path):
    cards, chooser, note, ids = handlers.library_view(settings_for(tmp_path))
    assert note.startswith("The library is empty")
    assert ids == [] and chooser["choices"] == [] and cards.samples == []
    player, facts, *_ = handlers.show_video(None, settings_for(tmp_path))
    assert player is None and facts.startswith("Pick a video")


def test_an_ingested_video_is_listed_shown_and_named_before_deleting(ingested, library_settings):
    video_id = ingested(CLIP).video_id
    _, chooser, note, ids = handlers.library_view(library_settings, video_id)
    assert video_id in ids and chooser["value"] == video_id
    assert video_id in [v for _, v in chooser["choices"]] and "video" in note
    assert handlers.on_select_card(ids.index(video_id), ids) == video_id
    player, facts, instances, *_ = handlers.on_video(video_id, library_settings)
    assert player.endswith(".mp4") and CLIP in facts and instances["data"]
    _, question = handlers.on_delete_request(video_id, library_settings)
    assert CLIP in question and "Learned workflows stay" in question


@pytest.mark.parametrize("call, message", [
    (lambda s: handlers.on_delete_request(None, s), "Select a video to delete first"),
    (lambda s: handlers.on_sql(s, None, "SELECT 1"), "Pick a video first"),
    (lambda s: handlers.on_memory_delete(s, "", "Semantic", None, True, ""),
     "Select a memory in the table first"),
    (lambda s: handlers.on_save(s, "localhost:8080", "m", "", 2, True), "must start with http"),
    # The CLI's `--n` and the Settings tab share one range (backend/inputs.py).
    (lambda s: handlers.on_save(s, "", "", "", 7, True), "from 1 to 6, not 7"),
    (lambda s: handlers.on_save(s, "", "", "", 0, True), "from 1 to 6, not 0"),
])
def test_bad_input_is_a_readable_page_error(tmp_path, call, message):
    with pytest.raises(gr.Error, match=message):
        call(settings_for(tmp_path))


@pytest.mark.parametrize("video_id, question, options, message", [
    (None, "how many people?", "", "Pick a video from the library"),
    ("0123456789abcdef", "   ", "", "Type a question first"),
    # Lone surrogates reach the app from a JSON string ("\\udcff"): refused before any model.
    ("0123456789abcdef", "how many\udcff", "", "The question is not valid UTF-8 text"),
    ("0123456789abcdef", "how many?", "2\n3\udcff",
     "The text of the options is not valid UTF-8 text"),
])
def test_a_question_that_cannot_be_asked_gets_one_note_and_changes_nothing(
        tmp_path, video_id, question, options, message):
    [outputs] = list(handlers.on_ask(video_id, question, options, [], [], settings_for(tmp_path)))
    *rest, note = outputs
    assert message in note and note.startswith("⚠")
    # The chat, the question box and every panel are left as they were.
    assert all(isinstance(o, type(gr.skip())) for o in rest) and len(rest) == 5 + handlers._PANELS


def test_saved_settings_apply_to_the_session_only(tmp_path):
    server = settings_for(tmp_path)
    prefs, note = handlers.on_save(server, "http://localhost:11434/v1", "qwen", "", 3, False)
    assert (prefs.llm_base_url, prefs.llm_model, prefs.n_solutions, prefs.memory) == \
        ("http://localhost:11434/v1", "qwen", 3, False)
    assert note.endswith("✓ saved") and "3 candidate answers" in note and "memory off" in note
    assert server.llm_base_url != prefs.llm_base_url  # the server's defaults are unchanged


def test_a_library_answer_draws_the_panels_of_a_video_it_names(ingested, library_settings):
    """A chat across the library: its answers' one-video panels never fail, and picking a
    video (as its chip does) keeps the chat."""
    video_id = ingested(CLIP).video_id
    named = {"video_id": "library", "question": "which clip shows people",
             "answer": f"{CLIP} (video {video_id}) from 0.2 s", "answered": True, "times": [0.2],
             "instance_ids": [], "evidence": [], "tree": [], "memory": {"enabled": False},
             "videos": [{"video_id": video_id, "name": CLIP, "times": [0.2]}]}
    nothing = {**named, "answer": "None of the 1 videos shows a bus", "videos": []}
    turns = [{"question": a["question"], "answer": a} for a in (named, nothing)]
    header, frames, timeline, *_, graph, _, _ = handlers.on_panels(turns, 0, library_settings)
    assert f"mr-video-{video_id}" in header and f"{CLIP} @ 0.2 s" in header
    assert frames and "0.2 s" in frames[0][1]
    assert timeline.data and graph.data  # the named video's own timeline and graph
    _, frames, timeline, *_ = handlers.on_panels(turns, 1, library_settings)
    assert frames == [] and "names no video" in timeline.layout.annotations[0].text
    *_, chatbot, kept_turns, selected = handlers.on_video(
        video_id, library_settings, "All videos", turns, 0)[:10]
    assert chatbot == kept_turns == selected == gr.skip()
    assert handlers.on_video(video_id, library_settings, "This video", turns, 0)[7] == []


def test_an_upload_of_the_wrong_type_is_refused_in_its_status_line(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a video")
    cleared, status, *library = handlers.on_upload(str(text), settings_for(tmp_path / "home"),
                                                   progress=lambda *a, **k: None)
    assert cleared is None and status.startswith("⚠") and "notes.txt" in status
    assert "not a supported video type" in status
    # The library's cards, chooser, note and ids are left as they were.
    assert len(library) == handlers._LIBRARY_OUTPUTS
    assert all(isinstance(o, type(gr.skip())) for o in library)


def test_the_cost_note_says_what_the_server_read_anew_and_for_how_long():
    usage = {"llm_calls": 2, "prompt_tokens": 900, "completion_tokens": 40, "llm_seconds": 9.0,
             "other_seconds": 0.3, "cached_tokens": 700, "prompt_seconds": 3.5}
    note = cost_note({"usage": usage})
    assert "900 prompt (700 from the server's cache) + 40 completion tokens" in note
    assert "9.0 s in the LLM (3.5 s reading prompts), 0.3 s elsewhere" in note
    # An endpoint that says neither (or an answer from before they were kept): nothing made up.
    plain = cost_note({"usage": {**usage, "cached_tokens": 0, "prompt_seconds": 0.0}})
    assert "cache" not in plain and "reading" not in plain and "9.0 s in the LLM, 0.3 s" in plain
