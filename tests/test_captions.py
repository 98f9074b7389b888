"""Captions from a vision model: key frames, the tables, episodic memory, an answer's evidence.

No vision model runs on this machine, so a fake OpenAI-compatible vision server on 127.0.0.1
stands in for the endpoint: it checks that each request carries a real JPEG of the frame and
answers with fixed captions, one per key frame in order. The local llama.cpp path is the same
`ChatCaptioner` over the same client with another base URL; what differs (the projector reaching
llama.cpp) is checked through the child's command line and a real server start.
"""

from __future__ import annotations

import base64
import io
import json
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import av
import pytest
from PIL import Image

from backend import episodic
from backend.ingest import decode
from backend.errors import CaptionError, SettingsError
from backend.factory import embedder_for
from backend.ingest.pipeline import ingest
from backend.library import Library
from backend.sql_runner import run_query
from backend.suggest import suggest
from models.llama_server import parser, server_arguments, server_params
from tests.conftest import clip, closed_endpoint, settings_for
from tests.fakes import ScriptedLLM, base_url, chat_completion, send_json, serving

CAPTIONS = ["A yellow kayak is tied to a red post beside the path.",
            "A street musician plays a green accordion near the shop windows.",
            "A delivery van with a blue roof is parked by the kerb."]
FIRST, SECOND = "mot15_TUD-Campus.mp4", "mot15_TUD-Stadtmitte.mp4"  # both 640x480 at 25 fps


class _VisionHandler(BaseHTTPRequestHandler):
    """/v1/chat/completions: a caption for a message with an image, HTTP 400 without one."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        parts = body["messages"][-1]["content"]
        images = [p["image_url"]["url"] for p in parts if isinstance(parts, list)
                  and p.get("type") == "image_url"]
        if self.path != "/v1/chat/completions" or not images:
            return self._send(400, {"error": {"message": "expected one image"}})
        jpeg = base64.b64decode(images[0].removeprefix("data:image/jpeg;base64,"))
        server = self.server
        with server.lock:
            server.images.append(Image.open(io.BytesIO(jpeg)).size)
            text = CAPTIONS[min(len(server.images), len(CAPTIONS)) - 1]
        self._send(200, chat_completion(text, model=body["model"]))

    def _send(self, status: int, payload: dict):
        send_json(self, status, payload)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def vision_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _VisionHandler)
    server.images, server.lock = [], threading.Lock()
    with serving(server):
        yield server


def _captioned(settings, url: str, **overrides):
    return replace(settings, captioner="openai", caption_model="fake-vlm", vision_base_url=url,
                   llm_timeout_s=10.0, **overrides)


def _cut_clip(target: Path) -> Path:
    """FIRST then SECOND in one file: a cut at FIRST's end, then a long shot."""
    with av.open(str(target), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 640, 480, "yuv420p"
        for name in (FIRST, SECOND):
            with av.open(str(clip(name))) as source:
                for frame in source.decode(video=0):
                    image = av.VideoFrame.from_ndarray(frame.to_ndarray(format="rgb24"), format="rgb24")
                    out.mux(stream.encode(image))
        out.mux(stream.encode())
    return target


@pytest.fixture(scope="module")
def captioned(tmp_path_factory, vision_server):
    """The cut clip ingested with captions every 4 s of a shot and at every cut."""
    folder = tmp_path_factory.mktemp("captions")
    url = base_url(vision_server)
    # 1-s steps, so that each key frame's time shows in which steps carry its caption.
    settings = _captioned(settings_for(folder / "library"), url, caption_interval=4.0,
                          segment_seconds=1.0, asr_enabled=False)
    result = ingest(_cut_clip(folder / "cut.mp4"), settings)
    return settings, Library(settings.home).get(result.video_id), list(vision_server.images)


def _rows(entry, sql):
    return run_query(entry.db_path, sql, timeout_s=5, max_rows=1000).as_dicts()


def test_key_frames_are_the_first_the_cut_and_one_per_interval_of_a_long_shot(captioned):
    settings, entry, images = captioned
    assert decode.probe(clip(FIRST)).duration == pytest.approx(2.84, abs=0.01)  # the cut
    # Key frames: 0 s; the first sampled frame after the cut (every 5th frame: 3.0 s); 4 s
    # later (7.0 s), as SECOND's view never changes enough to count as a new one.
    assert len(images) == 3 and all(size == (640, 480) for size in images)
    steps = _rows(entry, "SELECT t_start, t_end, description, source FROM timeline ORDER BY t_start")
    assert {s["source"] for s in steps} == {"openai:fake-vlm"} and len(steps) >= 9
    for s in steps:  # each step carries the caption of the latest key frame before its end
        expected = 0 if s["t_end"] <= 3.0 else 1 if s["t_end"] <= 7.0 else 2
        assert s["description"].startswith(CAPTIONS[expected]), s
    assert json.loads(_rows(entry, "SELECT models FROM video")[0]["models"])["captions"] == \
        "openai:fake-vlm"
    # A captioned video suggests asking what is seen, at a time its captions cover.
    assert any(q.startswith("what can be seen at ") for q in suggest(entry.db_path))


def test_captions_reach_episodic_memory_at_every_scale(captioned):
    settings, entry, _ = captioned
    embed = embedder_for(settings).embed
    hits = episodic.search(entry.folder, embed(["a musician playing an accordion"])[0], k=3,
                           scale="fine")
    assert CAPTIONS[1] in hits[0]["text"] and hits[0]["t_end"] > decode.probe(clip(FIRST)).duration
    windows = [r for r in episodic.rows(entry.folder) if r["scale"] != "fine"]
    assert windows and all(CAPTIONS[0] in r["text"] for r in windows if r["t_start"] == 0)


def test_an_answer_found_only_in_a_caption_has_it_in_its_evidence(captioned):
    """A scripted planner (the small real models rarely pick the timeline for a kind the detector
    cannot name): the real tool reads the real tables, and the caption is cited with its time."""
    from backend.ask import ask

    settings, entry, _ = captioned
    llm = ScriptedLLM([
        {"thought": "look at what is seen", "action": "What", "action_input": "what colour is the kayak"},
        {"operation": "timeline", "target": "", "time": "the start", "until": "", "words": ""},
        {"thought": "the caption says", "action": "Answer", "action_input": "yellow"}])
    answer = ask(entry.video_id, "what colour is the kayak?", replace(settings, memory=False,
                                                                      n_solutions=1), llm=llm)
    assert answer.answered and answer.answer == "yellow" and not llm.replies
    cited = [e for e in answer.evidence if CAPTIONS[0] in e.observation]
    assert cited and cited[0].tool == "What" and "FROM timeline" in cited[0].sql
    assert 0.0 in answer.times


def _no_video_and_no_leftovers(settings) -> None:
    library = Library(settings.home)
    assert library.list() == []
    staging = settings.home / ".staging"
    assert not staging.exists() or not any(staging.iterdir())


def test_unreachable_endpoint_stops_ingest_with_a_clear_error(tmp_path):
    settings = _captioned(settings_for(tmp_path), closed_endpoint())
    with pytest.raises(CaptionError) as error:
        ingest(clip(FIRST), settings)
    message = str(error.value)
    assert "frame at 0.0 s" in message and "cannot reach" in message
    assert "added nothing to the library" in message and "MEMORYREEL_CAPTIONER=evidence" in message
    _no_video_and_no_leftovers(settings)


def test_garbage_from_the_endpoint_stops_ingest_with_a_clear_error(tmp_path, garbage_endpoint):
    settings = _captioned(settings_for(tmp_path), garbage_endpoint)
    with pytest.raises(CaptionError, match="not a chat completion"):
        ingest(clip(FIRST), settings)
    _no_video_and_no_leftovers(settings)


# --- the local llama.cpp path -----------------------------------------------------------------

def test_the_projector_reaches_llama_cpp_parameters(tmp_path):
    model, projector = tmp_path / "smolvlm.gguf", tmp_path / "mmproj-smolvlm.gguf"
    arguments = server_arguments(model, "127.0.0.1", 8080, 4096, 2, 4, 1024, 1, projector)
    params = server_params(parser().parse_args(arguments), "key")
    assert params.model.path == str(model) and params.mmproj.path == str(projector)
    assert params.n_ctx == 4096 and params.hostnames == ["127.0.0.1"] and params.api_keys == ["key"]
    text_only = server_params(parser().parse_args(
        server_arguments(model, "127.0.0.1", 8080, 4096, 2, 4, 1024, 1)), "key")
    assert text_only.mmproj.path == ""


def test_a_missing_or_wrong_projector_is_a_clear_error(tmp_path):
    from models import weights

    settings = replace(settings_for(tmp_path), captioner="llama")
    gguf = weights.qwen_gguf(settings.cache_dir, "0.5b")
    missing = replace(settings, vision_gguf=str(gguf), vision_mmproj=str(tmp_path / "none.gguf"))
    with pytest.raises(CaptionError, match=r"multimodal projector file .*none.gguf does not exist"):
        ingest(clip(FIRST), missing)
    # A real llama.cpp start: a text model given as the projector is refused, so the projector
    # does reach llama.cpp, and the error names both files.
    wrong = replace(settings, vision_gguf=str(gguf), vision_mmproj=str(gguf))
    with pytest.raises(CaptionError, match=r"failed to start .* and projector"):
        ingest(clip(FIRST), wrong)
    _no_video_and_no_leftovers(settings)


@pytest.mark.parametrize("env, needs", [
    ({"MEMORYREEL_CAPTIONER": "llama", "MEMORYREEL_VISION_GGUF": "m.gguf"}, "MEMORYREEL_VISION_MMPROJ"),
    ({"MEMORYREEL_CAPTIONER": "openai", "MEMORYREEL_CAPTION_MODEL": "gpt"}, "MEMORYREEL_VISION_BASE_URL"),
])
def test_a_captioner_without_its_files_or_endpoint_is_refused_at_load(monkeypatch, env, needs):
    from backend import config

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError, match=needs):
        config.load()

