"""The panels under the chat for one stored answer: objects, memories, replays, tree, evidence.

`render` rebuilds every panel from the answer dict kept in the session (its full trace), so
selecting an earlier answer in the chat shows that answer's panels, not the latest one's.
"""

from __future__ import annotations

import html

from app import figures, panels
from app.api import memory_store
from app.chat import chips_html
from app.views import clock
from backend.config import Settings
from backend.errors import NotFoundError
from backend.library import Library

EMPTY_HEADER = ("<div class='mr-answer-head mr-empty'>Ask a question: this is where MemoryReel "
                "shows why the answer came out as it did.</div>")
_EMPTY_TABLE = {"headers": [], "data": []}


def _cut(text: str, n: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def header(answer: dict, number: int, total: int) -> str:
    chips = chips_html(answer.get("times") or [])
    options = answer.get("options") or []
    shown = answer["answer"]
    if answer.get("option") is not None and options:
        shown = f"{chr(65 + answer['option'])}. {options[answer['option']]}"
    rewritten = answer.get("standalone_question") or answer["question"]
    asked = html.escape(answer["question"])
    if rewritten.strip() != answer["question"].strip():
        asked += f" <span class='mr-subtle'>(understood as “{html.escape(rewritten)}”)</span>"
    state = "" if answer.get("answered") else " mr-warn"
    return (f"<div class='mr-answer-head'><div class='mr-eyebrow'>Answer {number} of {total}"
            f"{' · click an earlier answer in the chat to see its panels' if total > 1 else ''}</div>"
            f"<div class='mr-q'>{asked}</div><div class='mr-a{state}'>{html.escape(shown)}</div>"
            f"{'<div>Evidence at ' + chips + '</div>' if chips else ''}</div>")


def evidence_table(answer: dict) -> dict:
    rows = [[e["node"], e["tool"], _cut(e["input"], 300), _cut(e["observation"], 400),
             ", ".join(clock(t) for t in (e.get("times") or [])[:8]),
             ", ".join(f"#{i}" for i in (e.get("instance_ids") or [])[:12])]
            for e in answer.get("evidence") or []]
    return {"headers": ["step", "tool", "input", "observation", "times", "objects"], "data": rows}


def cost_note(answer: dict) -> str:
    usage = answer.get("usage") or {}
    if not usage:
        return ""
    text = (f"**{usage.get('llm_calls', 0)} LLM calls** · {usage.get('prompt_tokens', 0)} prompt + "
            f"{usage.get('completion_tokens', 0)} completion tokens · "
            f"{usage.get('llm_seconds', 0):.1f} s in the LLM, "
            f"{usage.get('other_seconds', 0):.1f} s elsewhere")
    learned = ((answer.get("memory") or {}).get("learned") or {}).get("usage") or {}
    if learned.get("llm_calls"):
        text += (f"\n\nLearning afterwards: {learned['llm_calls']} LLM calls, "
                 f"{learned.get('llm_seconds', 0):.1f} s")
    return text


def render(settings: Settings, turns: list[dict], selected: int | None,
           video_id: str | None = None) -> tuple:
    """(header, key frames, timeline, memory note, memories, replay bars, tree, evidence, cost).

    Before any answer, the selected video's key frames and object timeline are shown, so the
    panels already say what is in the video.
    """
    library = Library(settings.home)
    counts = [c.as_dict() for c in memory_store(settings).replay_counts()]
    if selected is None or not turns:
        entry = library.get(video_id) if video_id else None
        return (EMPTY_HEADER, panels.evidence_frames(entry, None) if entry else [],
                panels.timeline_panel(entry, None) if entry else None, "", _EMPTY_TABLE,
                panels.replay_panel(None, counts), None, _EMPTY_TABLE, "")
    answer = turns[selected]["answer"]
    try:
        entry = library.get(answer["video_id"])
    except NotFoundError:  # deleted since it was answered: the trace still explains the answer
        entry = None
    gone = figures.empty_figure("When each tracked object is in view",
                                "This video has been deleted from the library.")
    memories, note = panels.memory_panel(answer, {e.video_id: e.name for e in library.list()})
    return (header(answer, selected + 1, len(turns)),
            panels.evidence_frames(entry, answer) if entry else [],
            panels.timeline_panel(entry, answer) if entry else gone,
            note, memories,
            panels.replay_panel(answer, counts),
            panels.tree_panel(answer),
            evidence_table(answer),
            cost_note(answer))
