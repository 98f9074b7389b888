"""The chat's flow of one answer: shown as soon as it is ready, learning after it."""

from __future__ import annotations

import threading
import time

import pytest

from app import chat
from backend.answer import Answer, Confidence, Lesson, MemoryTrace
from backend.config import load


def _answer(learning_started: threading.Event, release: threading.Event) -> Answer:
    answer = Answer(video_id="v", question="q", standalone_question="q", options=None,
                    answer="3 people", option=None, answered=True, times=[1.0], instance_ids=[1],
                    evidence=[], tree=[], memory=MemoryTrace(enabled=True),
                    confidence=Confidence(level="high", basis="computed", agreement="1/1",
                                          explanation="1 of 1 candidate answers agree"))

    def slow_learning() -> Lesson:
        learning_started.set()
        assert release.wait(30), "the test never released learning"
        return Lesson(verdict="valid", reason="the count matches")

    answer.pending_learning = slow_learning
    return answer


def test_the_answer_is_shown_before_learning_and_the_turn_updated_after(monkeypatch):
    learning_started, release = threading.Event(), threading.Event()
    monkeypatch.setattr(chat, "answer_first",
                        lambda *args, **kwargs: _answer(learning_started, release))
    updates = chat.converse("v", "how many people?", "", [], [], load())
    messages, turns = next((m, t) for m, t, _ in updates if t)
    # The answer is on screen while learning has not finished (it is blocked right now).
    assert not release.is_set() and "3 people" in messages[-1]["content"]
    assert "Confidence high" in messages[-1]["content"]
    assert "learned" not in turns[-1]["answer"]["memory"]
    # The event is over (the next question can be asked) while learning still runs.
    assert next(updates, None) is None
    release.set()
    deadline = time.monotonic() + 30
    while "learned" not in turns[-1]["answer"]["memory"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert learning_started.is_set()
    assert turns[-1]["answer"]["memory"]["learned"]["verdict"] == "valid"


def test_a_guess_without_evidence_is_flagged_in_the_chat():
    line = chat.confidence_line({"level": "low", "basis": "unobserved", "agreement": "1/1",
                                 "explanation": "the answer rests on nothing"})
    assert "Not supported by evidence" in line and "Confidence low" in line


def test_a_library_answer_shows_one_chip_per_video_and_time(monkeypatch):
    asked = {}

    def across(question, options_text, settings, on_step=None):
        asked["question"] = question
        return Answer(video_id="library", question=question, standalone_question=question,
                      options=None, answer="1 of 2 videos show a bus", option=None,
                      answered=True, times=[18.6], instance_ids=[], evidence=[], tree=[],
                      videos=[{"video_id": "64dd421c7a5430ba", "name": "highway.avi",
                               "times": [18.6, 20.0]}])
    monkeypatch.setattr(chat, "answer_library", across)
    monkeypatch.setattr(chat, "answer_first", lambda *a, **k: pytest.fail("asked one video"))
    *_, (messages, turns, _) = chat.converse(None, "In which clip is there a bus?", "", [], [],
                                             load(), across_library=True)
    shown = messages[-1]["content"]
    assert asked["question"] == "In which clip is there a bus?"
    assert shown.count("mr-video-64dd421c7a5430ba") == 2 and "Evidence at" not in shown
    assert "highway.avi @ 18.6 s" in shown and "highway.avi @ 20.0 s" in shown
    # A later question about one video is not told the library's turns as its history.
    assert chat.history_of(turns, "64dd421c7a5430ba") == []
    assert chat.history_of(turns, "library") == [("In which clip is there a bus?",
                                                   "1 of 2 videos show a bus")]
