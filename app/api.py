"""What the page and the `ingest` / `ask` / `ask_library` API endpoints do, without any widgets."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from app.uploads import UPLOADS
from backend.ask import Answer, ask
from backend.ask_library import LIBRARY, ask_library
from backend.config import Settings
from backend.errors import InputError
from backend.ingest.pipeline import STAGES, IngestResult, check_upload, ingest
from backend.inputs import check_question, parse_options
from backend.library import Library
from backend.memory.store import MemoryStore

_STORES: dict[tuple[Path, str], MemoryStore] = {}
_STORES_GUARD = threading.Lock()

# report(text, fraction or None) reports ingest progress to whoever shows it.
StageReport = Callable[[str, float | None], None]


def ingest_upload(file_path: str | None, settings: Settings,
                  report: StageReport | None = None) -> IngestResult:
    """Check the upload (type, size) before anything is written, then ingest it. The uploaded
    copy in Gradio's cache goes afterwards, ingested or rejected (the library keeps its own),
    unless another upload of the same file still needs it or no client uploaded it (see
    app/uploads.py)."""
    if not file_path:
        raise InputError("Choose a video file first.")
    order = list(STAGES)

    def progress(stage: str, done: int, total: int) -> None:
        if report:
            step = order.index(stage) + 1
            report(f"{step}/{len(order)} {STAGES[stage]}", done / total if total else None)

    try:
        check_upload(Path(file_path), settings.max_upload_mb * 2**20)
        return ingest(Path(file_path), settings, progress=progress)
    finally:
        UPLOADS.done_with(file_path)


def answer_question(video_id: str | None, question: str | None, options_text: str | None,
                    settings: Settings, *, history: list[tuple[str, str]] | None = None,
                    on_step=None) -> dict:
    """One answer as the dict `Answer.as_dict()` gives, learning included (learning waits for
    other questions being answered, backend/giving_way.py); LLM faults read 'could not answer: ...'."""
    return answer_first(video_id, question, options_text, settings, history=history,
                        on_step=on_step, learn_now=True).as_dict()


def answer_first(video_id: str | None, question: str | None, options_text: str | None,
                 settings: Settings, *, history: list[tuple[str, str]] | None = None,
                 on_step=None, learn_now: bool = False) -> Answer:
    """The answer, with learning left to `Answer.learn()` so the chat can show it first."""
    check_question(video_id, question)
    return ask(video_id, question.strip(), settings, options=parse_options(options_text),
               history=history or None, on_step=on_step, learn_now=learn_now)


def answer_library(question: str | None, options_text: str | None, settings: Settings, *,
                   on_step=None) -> Answer:
    """An answer across every video in the library; it names the videos in `Answer.videos`."""
    check_question(LIBRARY, question)
    return ask_library(question.strip(), settings, options=parse_options(options_text),
                       on_step=on_step)


def memory_store(settings: Settings) -> MemoryStore:
    """One store per memory folder and tables' URI for the whole server (per-session settings
    share it)."""
    with _STORES_GUARD:
        key = (settings.memory_path.resolve(), settings.memory_uri)
        if key not in _STORES:
            _STORES[key] = MemoryStore(settings)
        return _STORES[key]


def delete_video(video_id: str, settings: Settings) -> str:
    """Remove the video's folder and its semantic memories; procedural memory stays."""
    library = Library(settings.home)
    name = library.get(video_id).name
    library.delete(video_id)
    forgotten = memory_store(settings).forget_video(video_id)
    return f"Deleted **{name}** and {forgotten} of its memories (learned workflows stay)."
