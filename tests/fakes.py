"""Test fakes shared by several test files, so that no test file imports another.

- `ScriptedLLM`, `FakeTool`, `step`: drive the planner and the agent without a model.
- `fake_answer`: an `Answer` as `ask` returns it, for the harness's commands run on stand-ins.
- `FakeModels` with its fake tracker, OCR, ASR, pose reader and embedder: the attributes
  ingest reads of a model set, replying with scripted detections, text and speech, so that
  ingest runs on a real clip (real decode, scenes and tables) in seconds.
- `chat_completion`, `serving`: a local OpenAI-compatible server replying what a test says.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import sqlite_utils

from backend.schema import create_tables
from models.llm import Reply, Usage
from models.types import Detection, Pose, SpeechSegment, TextItem


class ScriptedLLM:
    """Replies from a list: a dict is a planner step, a str is plain text, an exception is raised."""

    name = "scripted"

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts: list[str] = []
        self.schemas: list = []

    def complete(self, messages, *, response_model=None, max_tokens=512, temperature=0.0):
        self.prompts.append(messages[-1]["content"])
        self.schemas.append(response_model)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        usage = Usage(calls=1, prompt_tokens=100, completion_tokens=10, seconds=0.01)
        if isinstance(reply, dict):
            return Reply(text=str(reply), parsed=response_model.model_validate(reply), usage=usage)
        return Reply(text=reply, parsed=None, usage=usage)


class FakeTool:
    def __init__(self, name, results):
        self.name, self.description = name, f"the {name} tool"
        self.results = list(results)
        self.inputs: list[str] = []

    def run(self, tool_input, ctx):
        self.inputs.append(tool_input)
        return self.results.pop(0)


def step(action, action_input, thought="t"):
    return {"thought": thought, "action": action, "action_input": action_input}


def fake_answer(question: str, options: list[str] | None, option: int | None, *,
                usage=None, memory=None, confidence=None, tree: list[dict] | None = None):
    """An answer with the given option, cost (`backend.answer.Cost`), memory trace
    (`MemoryTrace`), confidence and planner tree; learning, if the trace holds any, counts as
    already done."""
    from backend.answer import Answer, Cost, MemoryTrace  # only for the tests that need them

    text = options[option] if options and option is not None else "could not answer"
    return Answer(video_id="fake", question=question, standalone_question=question,
                  options=options, answer=text, option=option, answered=option is not None,
                  times=[], instance_ids=[], evidence=[], tree=tree or [], usage=usage or Cost(),
                  memory=memory or MemoryTrace(), confidence=confidence)


# --- a fake model set for ingest ------------------------------------------------------------------

class FakeTracker:
    """Two people crossing the frame left to right, one box each per sampled frame; raises
    from the `fail_at`-th frame on, as a model that dies mid-video would."""

    name = "fake-tracker"
    gives_pose = True
    categories = {0: "person"}

    def __init__(self, fail_at: int | None = None):
        self.fail_at = fail_at
        self.frames = 0

    def reset(self) -> None:
        self.frames = 0

    def fit(self, frames: list[np.ndarray], largest: int, smallest: int, later=None) -> int:
        return 640

    def most_people(self, frames: list[np.ndarray], imgsz: int) -> int:
        return 2

    def track(self, frame: np.ndarray) -> list[Detection]:
        if self.fail_at is not None and self.frames >= self.fail_at:
            raise RuntimeError("the fake tracker failed")
        height, width = frame.shape[:2]
        x = min(width * 0.6, 10.0 + 4.0 * self.frames)
        self.frames += 1
        return [Detection(track_id=k, category="person",
                          box=(x, 40.0 + 150 * k, x + width * 0.15, 40.0 + 150 * k + height * 0.3),
                          confidence=0.9, pose=Pose(posture="standing"))
                for k in (1, 2)]


class FakeOCR:
    name = "fake-ocr"
    TEXT = "PLATFORM 9"

    def read(self, frame: np.ndarray) -> list[TextItem]:
        return [TextItem(text=self.TEXT, box=(5.0, 5.0, 120.0, 30.0), confidence=0.95)]


class FakeSpeech:
    name = "fake-asr"
    SEGMENT = SpeechSegment(t_start=1.0, t_end=2.5, text="the blue kettle is boiling",
                            words=[(1.0, 1.3, "the"), (1.3, 1.7, "blue"), (1.7, 2.1, "kettle"),
                                   (2.1, 2.3, "is"), (2.3, 2.5, "boiling")])

    def __init__(self):
        self.heard: list[int] = []  # samples of each audio track given

    def transcribe(self, audio: np.ndarray) -> list[SpeechSegment]:
        self.heard.append(len(audio))
        return [self.SEGMENT]


class FakePose:
    name = "fake-pose"

    def __init__(self):
        self.reads = 0
        self.sizes: list[int | None] = []  # the input size asked for at each read

    def read(self, frame, boxes, imgsz=None) -> list[Pose]:
        self.reads += 1
        self.sizes.append(imgsz)
        return [Pose(posture="standing") for _ in boxes]


class FakeEmbedder:
    """A unit vector per text from its hash: equal texts, equal vectors."""

    name = "fake-embedder"
    DIM = 16

    def __init__(self, on_embed=None):
        self.texts: list[str] = []
        self.on_embed = on_embed  # called before embedding: a test looks at the library then

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.on_embed:
            self.on_embed()
        self.texts += texts
        vectors = np.array([np.frombuffer(hashlib.sha256(t.encode()).digest()[:self.DIM], np.uint8)
                            for t in texts], dtype=np.float32).reshape(len(texts), self.DIM) + 1
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class FakeMotion:
    name = "fake-motion"
    camera_moving = False

    def track(self, frame, people, camera_moved=False) -> list[Detection]:
        return []


class FakeModels:
    """What ingest reads of a model set (duck-typed: the same attributes), all scripted but the
    shot and camera analyser, which is plain arithmetic on the decoded frames."""

    captioner = None
    tagger = places = None  # tags off
    video_actions = None  # activities off

    def __init__(self, tracker: FakeTracker | None = None, embedder: FakeEmbedder | None = None,
                 crowd_tracker: FakeTracker | None = None):
        self.tracker = tracker or FakeTracker()
        self.crowd_tracker = crowd_tracker
        self.speech, self.ocr, self.pose = FakeSpeech(), FakeOCR(), FakePose()
        self.embedder = embedder or FakeEmbedder()

    def motion(self) -> FakeMotion:
        return FakeMotion()

    @property
    def objects(self):
        from models.weights import WeightsError

        raise WeightsError("the fakes track no everyday objects")

    def scenes(self, fps: float):
        from models.scenes import SceneAnalyser

        return SceneAnalyser(fps)


# --- fake OpenAI-compatible servers ---------------------------------------------------------------

def chat_completion(content: str, model: str = "fake", finish_reason: str = "stop",
                    usage: dict | None = None) -> dict:
    """A /chat/completions reply body as an OpenAI-compatible server sends it."""
    body = {"id": "fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": content}}]}
    if usage is not None:
        body["usage"] = usage
    return body


def send(handler: BaseHTTPRequestHandler, status: int, content_type: str, body: bytes) -> None:
    """One complete HTTP reply from a fake server's handler."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def send_json(handler: BaseHTTPRequestHandler, status: int, payload: dict) -> None:
    send(handler, status, "application/json", json.dumps(payload).encode())


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    """The server answering on a thread of its own until the block ends."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def base_url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def fake_video_folder(folder: Path, video_id: str) -> None:
    """A library video folder with the `video` row the library reads, and nothing else."""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite_utils.Database(folder / "video.db")
    create_tables(db)
    db["video"].insert({"id": video_id, "name": "clip.mp4", "sha256": video_id * 4, "fps": 25.0,
                        "frames": 10, "duration": 0.4, "width": 8, "height": 8, "has_audio": 0,
                        "codec": "h264", "ingested_at": "2026-01-01T00:00:00+00:00",
                        "models": "{}"})
    db.close()
