"""The web app's API without a browser: gradio_client calls `ingest`, `ask` and `ask_library`
on a live server.

The server runs in a background thread on a free port with a temporary library, exactly as
`python -m app` configures it. Answers use the embedded Qwen2.5-Coder 0.5B (about twice as fast
as the default 1.5B); these tests check the app's plumbing, tests/test_agent.py the answers.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from gradio.utils import get_upload_folder
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError, AuthenticationError

from app import session
from app.api import answer_question, memory_store
from backend import config
from backend.library import Library
from backend.sql_runner import run_query
from tests.conftest import (call_endpoint, clip, closed_endpoint, file_data, free_port,
                            running_app, settings_for, upload)

CLIP = "mot15_TUD-Campus.mp4"
SECOND = "intel_bottle-detection.mp4"
HIGHWAY = "bgslib_video02_highway.avi"
OPTIONS = ["2", "3", "4", "5", "6"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    settings = settings_for(tmp_path_factory.mktemp("app-library"), llm_size="0.5b")
    # A cache of this module's own, so that what an upload leaves there is this server's doing.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio-cache")))
        with running_app(settings) as (url, demo):
            yield settings, url, demo


@pytest.fixture(scope="module")
def client(server):
    return Client(server[1], verbose=False)


def _library_ids(settings) -> list[str]:
    videos = settings.home / "videos"
    return sorted(p.name for p in videos.iterdir()) if videos.is_dir() else []


def test_binds_localhost_without_a_share_link(server):
    _, url, demo = server
    assert demo.server_name == "127.0.0.1"
    assert demo.share_url is None
    assert url.startswith("http://127.0.0.1:")


def test_a_page_slow_to_answer_at_start_is_started_again_not_shared(tmp_path, monkeypatch):
    """Gradio asks its own page once at start, 3 s at most, and where that times out (a busy
    machine) stops with advice to open a public share link: the app starts again instead, on
    localhost, and serves its page."""
    from gradio import networking

    checks = []
    real = networking.url_ok
    # The first check times out; later ones are Gradio's own.
    monkeypatch.setattr(networking, "url_ok",
                        lambda url: bool(checks.append(url)) if not checks else real(url))
    with running_app(settings_for(tmp_path)) as (url, demo):
        assert demo.share_url is None and demo.server_name == "127.0.0.1"
        assert httpx.get(url, timeout=30).status_code == 200
    assert len(checks) == 1


def test_the_model_is_readied_once_the_page_is_up(tmp_path, monkeypatch):
    """The warm-up (backend/warm_up.py, tested on a model in tests/test_warm_up.py) starts after
    the page answers, so that it never competes with Gradio's 3-s check of it."""
    from app import ui
    from tests import conftest

    port, begun = free_port(), []
    monkeypatch.setattr(conftest, "free_port", lambda: port)  # running_app's port
    monkeypatch.setattr(ui.warm_up, "begin", lambda settings: begun.append(
        (settings, httpx.get(f"http://127.0.0.1:{port}/", timeout=30).status_code)))
    settings = settings_for(tmp_path)
    with running_app(settings) as (url, _):
        assert url == f"http://127.0.0.1:{port}/"
        assert begun == [(settings, 200)]


@pytest.mark.parametrize("name, content, expected", [
    ("notes.txt", b"not a video", r"not a supported video type"),
    ("empty.mp4", b"", r"is empty"),
    ("fake.mp4", b"hello, this is text pretending to be a video" * 50, r"not a video|cannot|no video"),
])
def test_bad_upload_is_a_readable_error_and_writes_nothing(server, client, tmp_path, name, content,
                                                           expected):
    settings = server[0]
    before = _library_ids(settings)
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(AppError) as error:
        client.predict(handle_file(str(path)), api_name="/ingest")
    message = str(error.value)
    assert re.search(expected, message, re.IGNORECASE), message
    assert "Traceback" not in message and 'File "' not in message
    assert _library_ids(settings) == before
    assert not list(Path(get_upload_folder()).rglob(name))  # the rejected upload is gone


def _cache_entries() -> set[Path]:
    return set(Path(get_upload_folder()).rglob("*"))


def test_an_ingested_upload_leaves_nothing_in_gradios_cache(server, client):
    before = _cache_entries()
    result = client.predict(handle_file(str(clip(CLIP))), api_name="/ingest")
    assert result["name"] == CLIP
    assert _cache_entries() - before == set()  # was: an empty tmpXXXXXXXX file per upload


def test_two_uploads_of_one_file_at_once_both_ingest(server):
    """Gradio names an upload by its bytes' hash, so both uploads are one file on the server."""
    import threading

    url = server[1]
    paths = [upload(url, clip(SECOND)) for _ in range(2)]
    assert paths[0] == paths[1]
    results = [None, None]

    def ingest(i):
        results[i] = call_endpoint(url, "ingest", file_data(paths[i]))
    threads = [threading.Thread(target=ingest, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [event for event, _ in results] == ["complete", "complete"], results
    assert len({value[0]["video_id"] for _, value in results}) == 1
    assert not Path(paths[0]).exists()  # removed once neither upload needs it


def test_ingest_never_deletes_a_cached_file_it_was_not_uploaded(server):
    """A client names files already in Gradio's cache (a key frame, another client's upload):
    they are refused or ingested, never deleted."""
    url, cache = server[1], Path(get_upload_folder())
    key_frame = cache / "3f" / "frame.jpg"
    key_frame.parent.mkdir(parents=True, exist_ok=True)
    key_frame.write_bytes(b"\xff\xd8\xff\xe0 a key frame the app cached")
    event, value = call_endpoint(url, "ingest", file_data(key_frame))
    assert event == "error" and "not a supported video type" in value["error"], value
    assert key_frame.is_file()
    someone_elses = cache / "5a" / CLIP
    someone_elses.parent.mkdir(parents=True, exist_ok=True)
    someone_elses.write_bytes(clip(CLIP).read_bytes())
    event, value = call_endpoint(url, "ingest", file_data(someone_elses))
    assert event == "complete", value
    assert someone_elses.is_file()
    for planted in (key_frame, someone_elses):  # the cache as the other tests expect it
        planted.unlink()
        planted.parent.rmdir()


def test_api_errors_name_files_not_server_folders(server):
    url = server[1]
    path = Path(upload(url, clip(SECOND)))
    path.unlink()  # gone before its ingest, as when another request removed it
    event, value = call_endpoint(url, "ingest", file_data(path))
    assert event == "error" and SECOND in value["error"], value
    assert str(path.parent) not in value["error"] and get_upload_folder() not in value["error"]
    assert not re.search(r"(^|[\s'\"(])/\w", value["error"]), value["error"]


def test_ingest_then_ask_through_gradio_client(server, client):
    settings = server[0]
    result = client.predict(handle_file(str(clip(CLIP))), api_name="/ingest")
    assert re.fullmatch(r"[0-9a-f]{16}", result["video_id"])
    assert result["name"] == CLIP and result["counts"]["instances"] >= 3
    assert result["video_id"] in _library_ids(settings)
    assert not list(Path(get_upload_folder()).rglob(CLIP))  # the library keeps its own copy

    question = "how many people are in the first frame"
    answer = client.predict(result["video_id"], question, "\n".join(OPTIONS), api_name="/ask")
    assert answer["video_id"] == result["video_id"] and answer["question"] == question
    assert answer["options"] == OPTIONS
    assert answer["answered"], answer["answer"]
    assert answer["answer"] == OPTIONS[answer["option"]]
    assert len(answer["tree"]) >= 2 and answer["chosen_leaves"]
    assert answer["evidence"] and all(e["tool"] for e in answer["evidence"])
    # The question's words route it to the count at that time, computed by code.
    assert answer["evidence"][0]["support"] == "computed"
    assert answer["confidence"]["basis"] == "computed"
    assert answer["memory"]["enabled"] and 1 <= answer["memory"]["k_s"] <= 5

    again = client.predict(handle_file(str(clip(CLIP))), api_name="/ingest")
    assert again["cached"] and again["video_id"] == result["video_id"]


def test_a_question_across_the_library_names_the_clip_and_when(ingested, library_settings):
    """Four clips, one of them with a bus (the highway's lorry, which the detector calls one):
    the answer names that clip, at a time the bus is in view, and no other clip."""
    ids = {name: ingested(name).video_id
           for name in (HIGHWAY, CLIP, SECOND, "autoeditor_example_speech.mp4")}
    # The truth, from each video's own tables (other tests may have added clips to this library).
    spans = {e.video_id: run_query(e.db_path, "SELECT first_seen, last_seen FROM instances "
                                              "WHERE category = 'bus'", timeout_s=5,
                                   max_rows=100).rows
             for e in Library(library_settings.home).list()}
    with_bus = {video_id for video_id, rows in spans.items() if rows}
    assert ids[HIGHWAY] in with_bus and not with_bus & (set(ids.values()) - {ids[HIGHWAY]})
    with running_app(library_settings) as (url, _):
        answer = Client(url, verbose=False).predict("In which clip is there a bus?", "",
                                                    api_name="/ask_library")
    assert answer["video_id"] == "library" and answer["answered"], answer["answer"]
    assert answer["usage"]["llm_calls"] == 0  # a question about a kind is answered by code
    assert {v["video_id"] for v in answer["videos"]} == with_bus
    highway = next(v for v in answer["videos"] if v["video_id"] == ids[HIGHWAY])
    assert highway["name"] == HIGHWAY and HIGHWAY in answer["answer"]
    assert highway["times"] and all(any(start - 0.2 <= t <= end + 0.2
                                        for start, end in spans[ids[HIGHWAY]])
                                    for t in highway["times"]), (highway, spans[ids[HIGHWAY]])
    for name in (CLIP, SECOND, "autoeditor_example_speech.mp4"):
        assert name not in answer["answer"] and ids[name] not in answer["answer"]


def test_suggested_questions_come_from_the_video(client):
    video_id = client.predict(handle_file(str(clip(CLIP))), api_name="/ingest")["video_id"]
    questions = client.predict(video_id, api_name="/suggest")
    assert "how many people appear in the video" in questions  # TUD-Campus: people, no audio
    assert not any(q.startswith("what is said") for q in questions)
    with pytest.raises(AppError, match="No video with id 'feedfacefeedface'"):
        client.predict("feedfacefeedface", api_name="/suggest")


def test_parallel_questions_share_the_server_without_lock_errors(server, client):
    """Two people asking at once: both answers come back, and both are learned from."""
    settings = server[0]
    video_id = client.predict(handle_file(str(clip(CLIP))), api_name="/ingest")["video_id"]
    # Neither is answered by a query its words route to, so both are planned by the shared
    # LLM server.
    questions = ["why do the people walk", "why are the people here"]
    jobs = [client.submit(video_id, q, "", api_name="/ask") for q in questions]
    answers = [job.result(timeout=900) for job in jobs]
    assert [a["question"] for a in answers] == questions
    for a in answers:
        # The planner ran (a memory the earlier tests left may answer with no LLM call at all).
        assert a["tree"], a["answer"]
        # The 0.5B model may fail a question on its own; neither may fail on a locked database.
        said = " ".join([a["answer"]] + [f"{n.get('observation')} {n.get('failure')}" for n in a["tree"]])
        assert "locked" not in said.lower() and "busy" not in said.lower(), said
        assert a["memory"]["enabled"] and "learned" in a["memory"], a["memory"]
    # Whatever either answer learned was written, and reads back, from the one shared store.
    store = memory_store(settings)
    written = [a["memory"]["learned"].get(key) for a in answers for key in ("entry_id", "workflow_id")]
    for entry_id in filter(None, written):
        assert store.get(entry_id).id == entry_id


def test_ask_refuses_unknown_video_and_empty_question(client):
    with pytest.raises(AppError, match="No video with id 'feedfacefeedface'"):
        client.predict("feedfacefeedface", "what happens", "", api_name="/ask")
    with pytest.raises(AppError, match="Type a question"):
        client.predict("feedfacefeedface", "   ", "", api_name="/ask")
    with pytest.raises(AppError, match="Type a question"):
        client.predict("   ", "", api_name="/ask_library")
    with pytest.raises(AppError, match="at least two options"):
        client.predict("feedfacefeedface", "what happens", "only one", api_name="/ask")


def test_llm_down_reads_as_a_message(server, client):
    settings = server[0]
    down = replace(settings, llm_base_url=closed_endpoint(), llm_model="nobody")
    video_id = client.predict(handle_file(str(clip(CLIP))), api_name="/ingest")["video_id"]
    answer = answer_question(video_id, "why do the people walk", "", down)
    assert not answer["answered"]
    assert answer["answer"].startswith("could not answer") and "cannot reach" in answer["answer"]
    report = session.check_connection(down)
    assert report.startswith("✗") and "cannot reach" in report


def test_login_is_required_when_auth_is_set(server):
    settings = replace(server[0], auth="ada:lovelace")
    with running_app(settings) as (url, _):
        with pytest.raises(AuthenticationError, match="credentials were not provided"):
            Client(url, verbose=False)
        assert Client(url, auth=("ada", "lovelace"), verbose=False).view_api(
            print_info=False, return_format="dict")["named_endpoints"].keys() >= \
            {"/ingest", "/ask", "/ask_library"}


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_no_login_is_asked_on_loopback_without_auth(host):
    from app.ui import login
    assert login(replace(config.Settings(), host=host, auth="")) is None


def test_a_server_others_can_reach_asks_for_a_login_even_without_auth(caplog):
    from app.ui import LOGIN_USER, login
    passwords = []
    for host, share in [("0.0.0.0", False), ("::", False), ("192.168.1.20", False),
                        ("myhost", False), ("127.0.0.1", True)]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="app.ui"):
            user, password = login(replace(config.Settings(), host=host, share=share, auth=""))
        assert user == LOGIN_USER and len(password) >= 16
        assert caplog.text.count(password) == 1 and f"user {LOGIN_USER}" in caplog.text
        passwords.append(password)
    assert len(set(passwords)) == len(passwords)  # made afresh for each run
    caplog.clear()
    chosen = replace(config.Settings(), host="0.0.0.0", auth="ada:lovelace")
    assert login(chosen) == ("ada", "lovelace") and not caplog.text


def test_launch_on_all_interfaces_without_auth_requires_the_generated_login(monkeypatch, tmp_path):
    import gradio as gr

    from app.ui import launch
    seen = {}
    monkeypatch.setattr(gr.Blocks, "launch", lambda self, **kwargs: seen.update(kwargs))
    launch(settings_for(tmp_path, host="0.0.0.0", auth="", share=False))
    assert seen["server_name"] == "0.0.0.0"
    assert seen["auth"] is not None, "open to the network with no login"
    assert seen["auth"][0] == "memoryreel" and len(seen["auth"][1]) >= 16


def test_the_login_page_reveals_no_api(server):
    settings = replace(server[0], auth="ada:lovelace")
    with running_app(settings) as (url, _):
        page = httpx.get(url).text
        assert '"auth_required":true' in page.replace(" ", "")  # the login page
        for endpoint in ("/ingest", "/ask", "/suggest"):
            assert endpoint not in page
        assert "named_endpoints" not in page and "gradio_api_info = null" in page
        with httpx.Client() as browser:  # logged in, the page describes the API as before
            browser.post(f"{url}login", data={"username": "ada", "password": "lovelace"})
            page = browser.get(url).text
        assert "named_endpoints" in page and '"/ingest"' in page
        client = Client(url, auth=("ada", "lovelace"), verbose=False)
        with pytest.raises(AppError, match="No video with id 'feedfacefeedface'"):
            client.predict("feedfacefeedface", api_name="/suggest")
