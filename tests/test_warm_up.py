"""The model readied before the first question (backend/warm_up.py), on the embedded 0.5B model
and a real clip: a first question's prompts read only what is their own."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from backend import warm_up
from backend.agent import prompts
from backend.ask import ask
from backend.factory import llm_for
from models.llama_server import get_embedded
from models.weights import qwen_gguf

CLIP = "mot15_TUD-Campus.mp4"


class Recording:
    """The model, with every call's messages and usage kept."""

    def __init__(self, llm):
        self._llm, self.calls = llm, []

    def __getattr__(self, name):
        return getattr(self._llm, name)

    def complete(self, messages, **kwargs):
        reply = self._llm.complete(messages, **kwargs)
        self.calls.append((messages, reply.usage))
        return reply


@pytest.fixture
def fresh(library_settings, monkeypatch):
    """Settings whose model is a server of its own (another context length than every other
    test's), so that only the warm-up can have filled its prompt cache."""
    monkeypatch.setattr(warm_up, "_done", set())
    settings = replace(library_settings, llm_size="0.5b", llm_ctx=6144, llm_warm_up=True,
                       memory=False, answer_checks=False, n_solutions=1)
    yield settings
    get_embedded(qwen_gguf(settings.cache_dir, "0.5b"), n_ctx=6144,
                 threads=settings.llm_threads).close()


def test_a_first_question_reads_only_what_is_its_own(ingested, fresh):
    entry = ingested(CLIP)
    openings = prompts.openings(warm_up.planner_tools())
    warm_up.begin(fresh).join(timeout=300)  # as the app starts it: in the background
    assert warm_up.warm_up(fresh).calls == 0, "once per server"

    llm = Recording(llm_for(fresh))
    answer = ask(entry.video_id, "how many people are in the first frame", fresh,
                 options=["3", "4", "5", "6", "7"], llm=llm)
    assert answer.usage.llm_calls == len(llm.calls) >= 1
    planner = [usage for messages, usage in llm.calls if messages[0] == openings[0][0]]
    assert planner, "the planner's prompt opens with the system message read at warm-up"
    # Its ~430 tokens came from the cache: the first call read only the question and context.
    assert all(usage.cached_tokens >= 400 for usage in planner), planner
    # The query form's examples (about 1,300 tokens), whichever tool and question ask for one.
    typed = llm.complete(prompts.typed_query_messages("When", "when does the last person leave?"),
                         max_tokens=8).usage
    assert typed.cached_tokens >= 1200 and typed.prompt_tokens - typed.cached_tokens < 40, typed
    # A chat's first follow-up: its rewrite's instructions (about 120 tokens) too.
    rewrite = llm.complete(prompts.standalone_messages(
        [("how many people are in the first frame", "4")], "and in the last one?"),
        max_tokens=8).usage
    assert rewrite.cached_tokens >= 100, rewrite


def test_a_remote_endpoint_is_sent_nothing_and_off_is_off(library_settings, monkeypatch, caplog):
    monkeypatch.setattr(warm_up, "_done", set())
    remote = replace(library_settings, llm_base_url="https://models.example.com/v1",
                     llm_warm_up=True)
    with caplog.at_level(logging.INFO, logger="backend.warm_up"):
        assert warm_up.warm_up(remote).calls == 0
    assert not caplog.records, "no call tried, so nothing to report"
    off = replace(library_settings, llm_warm_up=False)
    assert warm_up.begin(off) is None and warm_up.warm_up(off).calls == 0
