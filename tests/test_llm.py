"""The chat-model layer: the embedded llama.cpp server with the real 0.5B model, and how
`OpenAIChat` reports endpoints that are down, slow or send garbage."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from backend.giving_way import GivingWay, answering
from models.llama_server import EmbeddedServer, get_embedded
from models.llm import (LLMBadReply, LLMRefused, LLMStopped, LLMTimeout, LLMUnavailable, OpenAIChat,
                        Usage)
from models.weights import qwen_gguf
from tests.fakes import base_url, chat_completion, serving

CACHE = Path(os.environ.get("MEMORYREEL_CACHE", Path.home() / ".cache" / "memoryreel"))


class Verdict(BaseModel):
    answer: str = Field(max_length=40)  # also bounds the grammar, so the reply stays short
    confidence: float
    kind: Literal["animal", "vehicle", "plant"]


# --- the embedded server with the real model ---

@pytest.fixture(scope="module")
def server() -> EmbeddedServer:
    return get_embedded(qwen_gguf(CACHE, "0.5b"))


def test_plain_completion_returns_text_and_usage(server):
    assert get_embedded(server.model_path) is server  # one server per process
    reply = server.client().complete(
        [{"role": "user", "content": "Say hello in two words."}], max_tokens=12)
    assert reply.text.strip() and reply.parsed is None
    assert reply.usage.calls == 1 and reply.usage.seconds > 0
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    total = Usage()
    total.add(reply.usage)
    total.add(reply.usage)
    assert total.calls == 2 and total.prompt_tokens == 2 * reply.usage.prompt_tokens


def test_response_model_is_constrained_and_validated(server):
    reply = server.client().complete([
        {"role": "system", "content": "Classify the thing the user names. Reply in JSON with "
                                      "answer (one word), confidence (0 to 1) and kind."},
        {"role": "user", "content": "A cat."}], response_model=Verdict, max_tokens=80)
    assert isinstance(reply.parsed, Verdict), reply.text
    assert json.loads(reply.text)["kind"] == reply.parsed.kind == "animal"


def test_two_simultaneous_requests_both_complete(server):
    client, replies = server.client(), []

    def ask(word: str) -> None:
        replies.append(client.complete([{"role": "user", "content": f"Repeat: {word}"}],
                                       max_tokens=6))

    threads = [threading.Thread(target=ask, args=(w,)) for w in ("apple", "pear")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(replies) == 2 and all(r.text for r in replies)


def test_a_file_that_is_not_a_model_fails_with_llm_unavailable(tmp_path):
    with pytest.raises(LLMUnavailable, match="does not exist"):
        EmbeddedServer(tmp_path / "missing.gguf")
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 64)  # right magic, broken body: llama.cpp refuses it
    with pytest.raises(LLMUnavailable, match="failed to start"):
        EmbeddedServer(fake)


# --- endpoints that misbehave ---

def _completion(content: str, finish_reason: str = "stop") -> str:
    return json.dumps(chat_completion(content, finish_reason=finish_reason, usage={
        "prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}))


class _Handler(BaseHTTPRequestHandler):
    answer: tuple[int, str, str] = (200, "application/json", "{}")  # status, type, body
    delay = 0.0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(self.delay)
        status, ctype, body = self.answer
        data = body.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (timeout test)
            pass

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake():
    """fake(status, content_type, body, delay=0) -> OpenAIChat against a local stub server."""
    handler = type("Handler", (_Handler,), {})

    def make(status: int, ctype: str, body: str, delay: float = 0.0) -> OpenAIChat:
        handler.answer, handler.delay = (status, ctype, body), delay
        return OpenAIChat(base_url(httpd), "fake", timeout=1.0)
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as httpd:
        yield make


HI = [{"role": "user", "content": "hi"}]


def test_endpoint_down_is_unavailable_quickly():
    with ThreadingHTTPServer(("127.0.0.1", 0), _Handler) as probe:
        port = probe.server_address[1]  # free now that it is closed again
    start = time.perf_counter()
    with pytest.raises(LLMUnavailable, match="cannot reach"):
        OpenAIChat(f"http://127.0.0.1:{port}/v1", "m", timeout=10).complete(HI)
    assert time.perf_counter() - start < 3


@pytest.mark.parametrize("ctype, body", [
    ("text/plain", "hello, I am not JSON"),
    ("application/json", "{not json"),
    ("application/json", '{"result": "ok"}'),
    ("application/json", "[1, 2, 3]"),
    ("application/json", '{"choices": []}'),
    ("application/json", _completion("")),
])
def test_garbage_is_a_bad_reply(fake, ctype, body):
    with pytest.raises(LLMBadReply):
        fake(200, ctype, body).complete(HI)


def test_content_that_does_not_match_the_schema_is_a_bad_reply(fake):
    for content in ('{"answer": "cat", "confidence": "high", "kind": "animal"}',
                    '{"answer": "cat", "confidence": 0.9, "kind": "mineral"}', "a cat"):
        with pytest.raises(LLMBadReply, match="not a valid Verdict"):
            fake(200, "application/json", _completion(content)).complete(
                HI, response_model=Verdict)
    ok = fake(200, "application/json",
              _completion('{"answer": "cat", "confidence": 0.9, "kind": "animal"}'))
    reply = ok.complete(HI, response_model=Verdict)
    assert reply.parsed == Verdict(answer="cat", confidence=0.9, kind="animal")
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (5, 3)
    # A server that says nothing of its cache or its reading time: none is made up.
    assert (reply.usage.cached_tokens, reply.usage.prompt_seconds) == (0, 0.0)


def test_status_codes_and_refusals(fake):
    error = json.dumps({"error": {"message": "boom"}})
    with pytest.raises(LLMUnavailable, match="HTTP 503"):
        fake(503, "application/json", error).complete(HI)
    with pytest.raises(LLMUnavailable, match="API key"):
        fake(401, "application/json", error).complete(HI)
    with pytest.raises(LLMBadReply, match="HTTP 400"):
        fake(400, "application/json", error).complete(HI)
    with pytest.raises(LLMRefused, match="content_filter"):
        fake(200, "application/json", _completion("", "content_filter")).complete(HI)


def test_slow_endpoint_times_out(fake):
    start = time.perf_counter()
    with pytest.raises(LLMTimeout, match="1 s"):
        fake(200, "application/json", _completion("late"), delay=3.0).complete(HI)
    assert time.perf_counter() - start < 2.5


# --- a call stopped by its caller, and learning that gives way to questions ---

COUNT = [{"role": "user", "content": "Count from 1 to 100, one number per line."}]
YES = [{"role": "user", "content": "Say yes."}]


def _counted(reply) -> bool:
    """A whole count, not the piece of one that a stopped call had streamed."""
    return reply.text.split()[:3] == ["1", "2", "3"] and len(reply.text.split()) >= 50


def test_a_streamed_reply_gives_the_same_answer_and_its_usage(server):
    client = server.client()
    messages = [{"role": "system", "content": "Classify the thing the user names. Reply in JSON "
                                              "with answer (one word), confidence and kind."},
                {"role": "user", "content": "A horse."}]
    whole = client.complete(messages, response_model=Verdict, max_tokens=80)
    streamed = client.complete(messages, response_model=Verdict, max_tokens=80,
                               stop=threading.Event())
    assert streamed.parsed.kind == whole.parsed.kind == "animal", streamed.text
    assert streamed.usage.prompt_tokens == whole.usage.prompt_tokens > 0
    assert streamed.usage.completion_tokens > 0 and streamed.usage.calls == 1


def test_usage_says_what_the_server_read_anew_and_how_long_it_read(server):
    client = server.client()
    # A system prompt this process has not sent before, so that its first reading is anew.
    system = f"Visitor {time.time_ns()}. " + "Answer the question in one short sentence. " * 30
    asked = [[{"role": "system", "content": system}, {"role": "user", "content": question}]
             for question in ("What is a horse?", "What is a boat?", "What is a tree?")]
    first = client.complete(asked[0], max_tokens=8).usage
    again = client.complete(asked[1], max_tokens=8).usage
    streamed = client.complete(asked[2], max_tokens=8, stop=threading.Event()).usage
    assert first.cached_tokens < first.prompt_tokens / 2
    for later in (again, streamed):  # the shared system prompt now comes from the cache
        assert first.prompt_tokens - 20 <= later.cached_tokens < later.prompt_tokens
    for usage in (first, again, streamed):
        assert 0 < usage.prompt_seconds < usage.seconds
    assert first.prompt_seconds > again.prompt_seconds  # reading 300 tokens, not 20


def test_a_call_stopped_mid_reply_ends_and_frees_the_server(server):
    client, stop, ended = server.client(), threading.Event(), []

    def count() -> None:
        try:
            client.complete(COUNT, max_tokens=300, stop=stop)
            ended.append("finished")
        except LLMStopped:
            ended.append("stopped")

    worker = threading.Thread(target=count)
    worker.start()
    time.sleep(1.0)
    stop.set()
    worker.join(timeout=60)
    assert ended == ["stopped"]
    assert client.complete(YES, max_tokens=4).text


def test_learning_waits_while_a_question_is_answered_and_gives_way_to_one(server, caplog):
    client, replies = server.client(), []
    learning = GivingWay(client)
    assert client.local and learning.name == client.name

    def learn(messages, max_tokens) -> None:
        replies.append(learning.complete(messages, max_tokens=max_tokens))

    with answering():
        waiting = threading.Thread(target=learn, args=(YES, 4))
        waiting.start()
        waiting.join(timeout=2.0)
        assert waiting.is_alive() and not replies  # no call while a question is answered
    waiting.join(timeout=60)
    assert len(replies) == 1 and replies[0].text

    caplog.set_level("INFO", logger="backend.giving_way")
    replies.clear()
    stopped = threading.Thread(target=learn, args=(COUNT, 300))
    stopped.start()
    time.sleep(1.0)  # learning's reply is under way ...
    with answering():  # ... when a question arrives: the question's call goes first
        question = client.complete(YES, max_tokens=4)
        assert not replies
    stopped.join(timeout=120)
    assert question.text and len(replies) == 1 and _counted(replies[0]), replies[0].text
    assert "gave way to a question" in caplog.text


def test_a_remote_model_is_not_held_back(fake):
    remote = fake(200, "application/json", _completion("fine"))
    remote.local = False  # the stub listens on this machine; a real remote one does not
    with answering():
        assert GivingWay(remote).complete(HI).text == "fine"
