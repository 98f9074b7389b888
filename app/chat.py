"""The conversation: streaming planner progress into the chat, answers with evidence-time chips.

A question is about the selected video, or across every video in the library (the scope).

A session's chat is two values: the Chatbot's messages and `turns`, one dict per answered
question ({question, options, answer, first, last}, where first..last are the message indices
it occupies), so selecting any message finds its answer and `history` can be rebuilt.
"""

from __future__ import annotations

import html
import logging
import queue
import threading
import time
from collections.abc import Iterator

from app.api import answer_first, answer_library
from app.errors import readable
from app.views import clock
from backend.ask_library import LIBRARY
from backend.config import Settings
from backend.inputs import check_question, parse_options

log = logging.getLogger(__name__)

MAX_CHIPS = 12
_POLL_SECONDS = 0.25

# The chat's scopes, with the question box's placeholder for each.
THIS_VIDEO, ALL_VIDEOS = "This video", "All videos"
SCOPES = {THIS_VIDEO: "Ask about the selected video",
          ALL_VIDEOS: "Ask across every video in the library"}


def chips_html(times: list[float]) -> str:
    """Evidence times as buttons; static/app.js seeks the player when one is clicked."""
    shown = sorted({round(float(t), 1) for t in times})
    chips = "".join(f'<button class="mr-chip" data-t="{t:.1f}" title="Play from {clock(t)}">'
                    f"▶ {clock(t)}</button>" for t in shown[:MAX_CHIPS])
    more = f'<span class="mr-more">+{len(shown) - MAX_CHIPS} more</span>' if len(shown) > MAX_CHIPS else ""
    return f'<span class="mr-chips">{chips}{more}</span>' if chips else ""


def video_chips_html(videos: list[dict]) -> str:
    """A library answer's videos, one button per video and time; static/app.js selects the
    video and then seeks the player. A video named without a time starts at 0. The video is in
    the class, as the chat's sanitizer keeps no data-* attribute (the time is in the text)."""
    pairs = [(v, t) for v in videos for t in sorted(set(v.get("times") or [0.0]))]
    chips = "".join(
        f'<button class="mr-chip mr-video-{html.escape(v["video_id"])}" data-t="{t:.1f}" '
        f'title="Show {html.escape(v["name"])} from {clock(t)}">'
        f'▶ {html.escape(v["name"])} @ {t:.1f} s</button>' for v, t in pairs[:MAX_CHIPS])
    more = f'<span class="mr-more">+{len(pairs) - MAX_CHIPS} more</span>' if len(pairs) > MAX_CHIPS else ""
    return f'<span class="mr-chips">{chips}{more}</span>' if chips else ""


def evidence_html(answer: dict) -> str:
    """The answer's evidence chips with their lead-in, or '' when it has none: times in the
    video, or for a library answer the videos it names (its times mix videos, so not those)."""
    if answer.get("video_id") == LIBRARY:
        chips = video_chips_html(answer.get("videos") or [])
        return "Found in " + chips if chips else ""
    chips = chips_html(answer.get("times") or [])
    return "Evidence at " + chips if chips else ""


def history_of(turns: list[dict], video_id: str | None) -> list[tuple[str, str]]:
    """Earlier turns about this video: a chat across the library may hold other videos' too."""
    return [(t["question"], t["answer"]["answer"]) for t in turns
            if t["answer"]["video_id"] == video_id]


def turn_at(turns: list[dict], message_index: int) -> int | None:
    """The turn that message `message_index` belongs to (question, planner steps or answer)."""
    for i, t in enumerate(turns):
        if t["first"] <= message_index <= t["last"]:
            return i
    return None


def question_message(question: str, options: list[str] | None) -> dict:
    text = html.escape(question)
    if options:
        text += "\n\n" + "\n".join(f"{chr(65 + i)}. {html.escape(o)}" for i, o in enumerate(options))
    return {"role": "user", "content": text}


def answer_message(answer: dict) -> dict:
    options = answer.get("options") or []
    if not answer.get("answered"):
        body = f'<span class="mr-warn">⚠ {html.escape(answer["answer"])}</span>'
    elif answer.get("option") is not None and options:
        i = answer["option"]
        body = f"**{chr(65 + i)}. {html.escape(options[i])}**"
        if answer["answer"].strip().lower() != options[i].strip().lower():
            body += f"\n\n{html.escape(answer['answer'])}"
    else:
        body = html.escape(answer["answer"])
    parts = [body]
    if answer.get("answered") and (line := confidence_line(answer.get("confidence") or {})):
        parts.append(line)
    if evidence := evidence_html(answer):
        parts.append(evidence)
    usage = answer.get("usage") or {}
    memory = answer.get("memory") or {}
    meta = [f"{usage.get('llm_calls', 0)} LLM calls",
            f"{usage.get('llm_seconds', 0) + usage.get('other_seconds', 0):.0f} s"]
    if memory.get("enabled"):
        meta.append(f"{len(memory.get('replayed') or [])} memories replayed")
    parts.append(f'<span class="mr-meta">{" · ".join(meta)}</span>')
    return {"role": "assistant", "content": "\n\n".join(parts)}


_LEVEL_MARKS = {"high": "●●●", "medium": "●●○", "low": "●○○"}


def confidence_line(confidence: dict) -> str:
    """How far to trust the answer, and why; unsupported multiple-choice picks say so plainly."""
    level = confidence.get("level")
    if level not in _LEVEL_MARKS:
        return ""
    text = f"Confidence {level} {_LEVEL_MARKS[level]}: {confidence.get('explanation', '')}"
    if confidence.get("basis") in ("unobserved", "none"):
        text = "⚠ Not supported by evidence, a best guess. " + text
    elif confidence.get("basis") == "proxy":
        text = "⚠ From a stand-in for what was asked, a best guess. " + text
    return f'<span class="mr-confidence mr-{level}">{html.escape(text)}</span>'


def step_line(node) -> str:
    """One planner step for the live progress view."""
    if node.failure:
        return f"✗ step {node.id}: failed: {node.failure}"
    if node.answer is not None:
        return f"✓ step {node.id}: answer: {node.answer}"
    line = f"• step {node.id} (depth {node.depth}) **{node.action or 'thinking'}**"
    if node.action_input:
        line += f": `{_cut(node.action_input, 160)}`"
    if node.observation:
        line += f"\n  → {_cut(node.observation, 200)}"
    return line


def _cut(text: str, n: int) -> str:
    text = " ".join(str(text).split()).replace("`", "'")
    return text if len(text) <= n else text[: n - 1] + "…"


def _planning(lines: list[str], current: str, started: float, done: bool) -> dict:
    """The collapsible 'thought' message that shows the planner's steps as they happen."""
    if done:
        metadata = {"title": f"Planner: {len(lines)} steps", "status": "done",
                    "duration": round(time.monotonic() - started, 1)}
    else:
        metadata = {"title": f"Working: {current}", "status": "pending"}
    return {"role": "assistant", "content": "\n".join(lines) or "…", "metadata": metadata}


def _current(node) -> str:
    if node.failure or node.answer is not None:
        return f"step {node.id} done, trying another path" if node.failure else "writing the answer"
    return f"step {node.id}, {node.action}"


def check_ask(video_id: str | None, question: str, options_text: str, *,
              across_library: bool = False) -> None:
    """Raise InputError, saying what to do, for a question that cannot be asked as it is."""
    check_question(LIBRARY if across_library else video_id, question)
    parse_options(options_text)


def converse(video_id: str | None, question: str, options_text: str, messages: list[dict],
             turns: list[dict], settings: Settings, *, across_library: bool = False
             ) -> Iterator[tuple[list[dict], list[dict], int | None]]:
    """Ask in a worker thread and yield (messages, turns, selected turn) after every planner step.

    across_library: ask about every video in the library (no video need be selected).

    The answer is shown as soon as it is ready and the event ends there, so the next question
    can be asked at once (Gradio ignores clicks while an event runs). Learning from the answer
    (validation, workflow, patterns) goes on in the worker; what it learned lands in the turn's
    `memory` dict, which the panels show when next drawn.
    """
    # Bad input fails before anything is shown.
    check_ask(video_id, question, options_text, across_library=across_library)
    options = parse_options(options_text)
    messages = [*messages, question_message(question.strip(), options)]
    steps: queue.Queue = queue.Queue()
    result: dict = {}
    answered = threading.Event()

    def work() -> None:
        try:
            if across_library:
                answer = answer_library(question, options_text, settings, on_step=steps.put)
            else:
                answer = answer_first(video_id, question, options_text, settings,
                                      history=history_of(turns, video_id), on_step=steps.put)
            shown = result["answer"] = answer.as_dict()
        except Exception as e:  # handed to the generator, which raises it readably
            result["error"] = e
            return
        finally:
            answered.set()
        try:
            answer.learn()
            shown["memory"].update(answer.memory.as_dict())  # the dict the shown turn holds
        except Exception:  # learning never costs the user the answer already shown
            log.exception("learning from an answer failed")

    started = time.monotonic()
    lines: list[str] = []
    current = "reading the question and recalling memories"
    worker = threading.Thread(target=work, name="memoryreel-ask", daemon=True)
    worker.start()
    yield [*messages, _planning(lines, current, started, False)], turns, None
    while not answered.is_set() or not steps.empty():
        try:
            node = steps.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            continue
        lines.append(step_line(node))
        current = _current(node)
        yield [*messages, _planning(lines, current, started, False)], turns, None
    if "error" in result:
        error = readable(result["error"])
        yield [*messages, {"role": "assistant",
                           "content": f'<span class="mr-warn">⚠ {html.escape(error.message)}</span>'}], turns, None
        raise error
    answer = result["answer"]
    first = len(messages) - 1
    messages = [*messages, _planning(lines, current, started, True), answer_message(answer)]
    turns = [*turns, {"question": question.strip(), "options": options, "answer": answer,
                      "first": first, "last": len(messages) - 1}]
    yield messages, turns, len(turns) - 1
