"""Chat completions behind one small interface, `ChatModel.complete(messages) -> Reply`.

`OpenAIChat` talks to any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp's server;
models/llama_server.py starts the embedded default). With `response_model` the reply is
constrained by the model's JSON schema and validated into an instance of it.

Every failure is one of the `LLMError` subclasses below, with a message a user can read:
callers catch those and never see an `openai` exception.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from models.errors import ModelError

_EXCERPT = 200  # characters of a bad reply quoted in an error message


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    # Of prompt_tokens, those the server took from its cache instead of reading them anew
    # (`usage.prompt_tokens_details.cached_tokens`, sent by OpenAI and llama.cpp alike).
    cached_tokens: int = 0
    # Of seconds, those the server spent reading the prompt: on a CPU an answer's time is
    # reading plus writing, and which half dominates decides what to cut. llama.cpp reports it
    # (`timings.prompt_ms`); 0 where a server does not say.
    prompt_seconds: float = 0.0

    def add(self, other: "Usage") -> None:
        for f in fields(self):  # every figure is a sum over calls
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class Reply:
    text: str  # raw text of the reply
    parsed: BaseModel | None  # the validated object when response_model was given
    usage: Usage = field(default_factory=Usage)  # this call's usage (calls=1)
    token_logprobs: list[float] = field(default_factory=list)  # asked for with logprobs=True


class LLMError(ModelError):
    """Base of every chat-model failure; str(error) is meant for the user."""


class LLMUnavailable(LLMError):
    """The endpoint cannot be reached, is down, rejects our credentials or failed to start."""


class LLMTimeout(LLMError):
    """The endpoint did not answer in time."""


class LLMBadReply(LLMError):
    """The reply is empty, not JSON, or does not match the requested schema."""


class LLMRefused(LLMError):
    """The model refused, a content filter stopped it, or it ended for an unexpected reason."""


class LLMStopped(LLMError):
    """The caller stopped the call (its `stop` event was set) before the reply was complete."""


class ChatModel(Protocol):
    name: str

    def complete(self, messages: list[dict], *, response_model: type[BaseModel] | None = None,
                 max_tokens: int = 512, temperature: float = 0.0) -> Reply: ...


def _excerpt(text: Any) -> str:
    text = str(text)
    return repr(text if len(text) <= _EXCERPT else text[:_EXCERPT] + "...")


def strict_schema(model: type[BaseModel]) -> dict:
    """The model's JSON schema as OpenAI's strict mode wants it: every object closed, every
    property required. Pydantic still validates the reply, so this only tightens the grammar."""
    schema = copy.deepcopy(model.model_json_schema())

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


class OpenAIChat:
    """`ChatModel` for any OpenAI-compatible chat-completions endpoint."""

    def __init__(self, base_url: str, model: str, api_key: str = "none", timeout: float = 120.0,
                 max_retries: int = 0):
        import openai

        self._openai = openai
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "none",
                                     timeout=timeout, max_retries=max_retries)
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.name = model
        # A server on this machine shares its cores between calls: one call can slow another.
        self.local = urlsplit(base_url).hostname in ("127.0.0.1", "localhost", "::1")

    def complete(self, messages: list[dict], *, response_model: type[BaseModel] | None = None,
                 max_tokens: int = 512, temperature: float = 0.0, logprobs: bool = False,
                 stop: threading.Event | None = None) -> Reply:
        """logprobs: also the log-probability of each generated token (`Reply.token_logprobs`).
        stop: set by another thread, ends the call with LLMStopped at the next token: the reply
        is streamed and its connection closed, which a llama.cpp server takes as a cancel."""
        kwargs: dict[str, Any] = {"logprobs": True} if logprobs else {}
        if response_model is not None:
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                "name": response_model.__name__, "schema": strict_schema(response_model),
                "strict": True}}
        start = time.perf_counter()
        if stop is None:
            done = self._completed(self._call(messages, max_tokens, temperature, kwargs))
        else:
            done = self._streamed(messages, max_tokens, temperature, kwargs, stop)
        seconds = time.perf_counter() - start

        text = done.text
        if done.refusal:
            raise LLMRefused(f"{self.name} refused: {_excerpt(done.refusal)}")
        if done.finish not in (None, "stop", "length"):
            raise LLMRefused(f"{self.name} stopped with finish_reason={done.finish!r}"
                             + (f" after {_excerpt(text)}" if text else ""))
        if not text.strip():
            raise LLMBadReply(f"{self.name} sent an empty reply (finish_reason={done.finish!r}).")

        reply = Reply(text=text, parsed=None, usage=_usage(done, seconds))
        if logprobs:
            reply.token_logprobs = done.logprobs
        if response_model is not None:
            try:
                reply.parsed = response_model.model_validate_json(text)
            except ValidationError as exc:
                cut = " (cut off at max_tokens)" if done.finish == "length" else ""
                raise LLMBadReply(
                    f"{self.name} reply is not a valid {response_model.__name__}{cut}: "
                    f"{exc.errors()[0].get('msg', exc)}; reply was {_excerpt(text)}") from None
        return reply

    def _completed(self, response: Any) -> "_Done":
        try:
            choice = response.choices[0]
            message = choice.message
            return _Done(text=message.content or "", finish=choice.finish_reason,
                         refusal=getattr(message, "refusal", None),
                         usage=getattr(response, "usage", None),
                         timings=_timings(response),
                         logprobs=_logprobs(getattr(choice, "logprobs", None)))
        except Exception:  # noqa: BLE001 - any shape that is not a chat completion
            raise LLMBadReply(f"{self.name} at {self.base_url} sent something that is not a chat "
                              f"completion: {_excerpt(_dump(response))}") from None

    def _streamed(self, messages, max_tokens, temperature, kwargs, stop: threading.Event) -> "_Done":
        """The reply read chunk by chunk, so that `stop` can end it between two tokens."""
        done = _Done(text="", finish=None, refusal=None, usage=None, timings=None, logprobs=[])
        stream = self._call(messages, max_tokens, temperature,
                            {**kwargs, "stream": True, "stream_options": {"include_usage": True}})
        with stream, self._errors():
            for chunk in stream:
                if stop.is_set():
                    raise LLMStopped(f"{self.name} at {self.base_url}: call stopped by the caller")
                done.usage = getattr(chunk, "usage", None) or done.usage
                done.timings = _timings(chunk) or done.timings
                for choice in (chunk.choices or [])[:1]:
                    done.text += choice.delta.content or ""
                    done.refusal = getattr(choice.delta, "refusal", None) or done.refusal
                    done.finish = choice.finish_reason or done.finish
                    done.logprobs += _logprobs(getattr(choice, "logprobs", None))
        return done

    def _call(self, messages, max_tokens, temperature, kwargs):
        with self._errors():
            return self._client.chat.completions.create(
                model=self.model, messages=messages, max_tokens=max_tokens,
                temperature=temperature, **kwargs)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """openai's exceptions as our LLMError subclasses, with a message a user can read."""
        openai = self._openai
        where = f"{self.name} at {self.base_url}"
        try:
            yield
        except openai.APITimeoutError:  # subclass of APIConnectionError: test it first
            raise LLMTimeout(f"{where} did not answer within {self.timeout:g} s.") from None
        except openai.APIConnectionError as exc:
            raise LLMUnavailable(f"cannot reach {where} ({exc.__cause__ or exc}); "
                                 "is the server running and the URL right?") from None
        except openai.APIStatusError as exc:
            raise _status_error(where, exc) from None
        except openai.APIResponseValidationError as exc:
            raise LLMBadReply(f"{where} sent a malformed reply: {exc}") from None
        except ValueError as exc:  # e.g. a JSON content type with a body that is not JSON
            raise LLMBadReply(f"{where} sent a reply that is not valid JSON: {exc}") from None


@dataclass
class _Done:
    """What a reply said, whether it came whole or streamed."""

    text: str
    finish: str | None
    refusal: str | None
    usage: Any  # the reply's `usage`, when the server sent one
    timings: dict | None  # llama.cpp's own figures for the call (`timings`), when sent
    logprobs: list[float]


def _timings(reply: Any) -> dict | None:
    """llama.cpp's `timings`, a field outside OpenAI's schema that openai keeps as an extra."""
    timings = (getattr(reply, "model_extra", None) or {}).get("timings")
    return timings if isinstance(timings, dict) else None


def _usage(done: _Done, seconds: float) -> Usage:
    usage, timings = done.usage, done.timings or {}
    details = getattr(usage, "prompt_tokens_details", None)
    return Usage(calls=1, seconds=seconds,
                 prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                 completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                 cached_tokens=int(getattr(details, "cached_tokens", 0) or 0),
                 prompt_seconds=float(timings.get("prompt_ms") or 0.0) / 1000)


def _logprobs(logprobs: Any) -> list[float]:
    return [float(t.logprob) for t in (getattr(logprobs, "content", None) or [])]


def _dump(response: Any) -> str:
    if isinstance(response, BaseModel):  # openai's lenient parse of an unexpected JSON body
        return response.model_dump_json(exclude_none=True)
    return str(response)


def _status_error(where: str, exc) -> LLMError:
    status = exc.status_code
    detail = _excerpt(getattr(exc, "message", "") or exc)
    if status >= 500 or status in (401, 403, 404, 429):
        hint = {401: " (check the API key)", 403: " (check the API key)",
                404: " (check the base URL and model name)", 429: " (rate limited)"}.get(status, "")
        return LLMUnavailable(f"{where} answered HTTP {status}{hint}: {detail}")
    body = str(getattr(exc, "body", "") or "") + str(exc)
    if "content_filter" in body or "content_policy" in body or "refus" in body.lower():
        return LLMRefused(f"{where} refused the request (HTTP {status}): {detail}")
    return LLMBadReply(f"{where} rejected the request (HTTP {status}): {detail}")
