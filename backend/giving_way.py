"""Questions first: learning from an answer gives way to a question being answered.

The chat shows an answer and then checks it (learning's LLM call, 10-20 s on the embedded
model) while the user reads; a question asked within those seconds shared the model's cores
with that check and took about half as long again (docs/EVALUATION.md, "Questions first").
So while any question of this process is being answered, learning's calls on a model of this
machine wait, and one already under way is stopped and asked again once no question is.
A remote endpoint's calls do not share our cores: they go ahead as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from models.llm import ChatModel, LLMStopped, Reply

log = logging.getLogger(__name__)

_idle = threading.Condition()
_answering = 0                   # questions being answered now, in any thread
_question = threading.Event()    # set while _answering > 0: stops learning's call under way


@contextmanager
def answering() -> Iterator[None]:
    """Hold while answering a question; learning's calls give way until every such block ends."""
    global _answering
    with _idle:
        _answering += 1
        _question.set()
    try:
        yield
    finally:
        with _idle:
            _answering -= 1
            if not _answering:
                _question.clear()
                _idle.notify_all()


class GivingWay:
    """A `ChatModel` for learning: on a model of this machine, each call waits until no question
    is being answered, and is stopped and asked again if one arrives before its reply is done."""

    def __init__(self, llm: ChatModel):
        self._llm = llm
        self.name = llm.name

    def complete(self, messages: list[dict], **kwargs) -> Reply:
        if not getattr(self._llm, "local", False):
            return self._llm.complete(messages, **kwargs)
        while True:
            with _idle:
                _idle.wait_for(lambda: not _answering)
            try:
                return self._llm.complete(messages, stop=_question, **kwargs)
            except LLMStopped:
                log.info("a learning call gave way to a question; it is asked again after")
