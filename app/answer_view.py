"""The panels under the chat for one stored answer: objects, memories, replays, tree, graph,
evidence.

`render` rebuilds every panel from the answer dict kept in the session (its full trace), so
selecting an earlier answer in the chat shows that answer's panels, not the latest one's. An
answer across the library shows one of the videos it names in the panels drawn from one video.
"""

from __future__ import annotations

import html

from app import figures, panels
from app.api import memory_store
from app.chat import evidence_html
from app.views import clock
from backend.ask_library import LIBRARY
from backend.config import Settings
from backend.errors import NotFoundError
from backend.library import Library, VideoEntry

EMPTY_HEADER = ("<div class='mr-answer-head mr-empty'>Ask a question: this is where MemoryReel "
                "shows why the answer came out as it did.</div>")
_EMPTY_TABLE = {"headers": [], "data": []}


def _cut(text: str, n: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def header(answer: dict, number: int, total: int) -> str:
    evidence = evidence_html(answer)
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
            f"{'<div>' + evidence + '</div>' if evidence else ''}</div>")


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
    cached, reading = usage.get("cached_tokens") or 0, usage.get("prompt_seconds") or 0
    text = (f"**{usage.get('llm_calls', 0)} LLM calls** · {usage.get('prompt_tokens', 0)} prompt"
            + (f" ({cached} from the server's cache)" if cached else "")
            + f" + {usage.get('completion_tokens', 0)} completion tokens · "
            f"{usage.get('llm_seconds', 0):.1f} s in the LLM"
            + (f" ({reading:.1f} s reading prompts)" if reading else "")
            + f", {usage.get('other_seconds', 0):.1f} s elsewhere")
    learned = ((answer.get("memory") or {}).get("learned") or {}).get("usage") or {}
    if learned.get("llm_calls"):
        text += (f"\n\nLearning afterwards: {learned['llm_calls']} LLM calls, "
                 f"{learned.get('llm_seconds', 0):.1f} s")
    return text


def render(settings: Settings, turns: list[dict], selected: int | None,
           video_id: str | None = None) -> tuple:
    """(header, key frames, timeline, memory note, memories, replay bars, tree, graph, evidence,
    cost).

    Before any answer, the selected video's key frames, object timeline and knowledge graph are
    shown, so the panels already say what is in the video.
    """
    library = Library(settings.home)
    counts = [c.as_dict() for c in memory_store(settings).replay_counts()]
    if selected is None or not turns:
        entry = library.get(video_id) if video_id else None
        return (EMPTY_HEADER, panels.evidence_frames(entry, None) if entry else [],
                panels.timeline_panel(entry, None) if entry else None, "", _EMPTY_TABLE,
                panels.replay_panel(None, counts), None,
                panels.graph_panel(entry, None) if entry else None, _EMPTY_TABLE, "")
    answer = turns[selected]["answer"]
    if answer["video_id"] == LIBRARY:
        entry, seen = library_focus(library, answer, video_id)
        missing = "The answer names no video in the library."
    else:
        entry, seen = _entry(library, answer["video_id"]), answer
        missing = "This video has been deleted from the library."
    gone = figures.empty_figure("When each tracked object is in view", missing)
    memories, note = panels.memory_panel(answer, {e.video_id: e.name for e in library.list()})
    return (header(answer, selected + 1, len(turns)),
            panels.evidence_frames(entry, seen) if entry else [],
            panels.timeline_panel(entry, seen) if entry else gone,
            note, memories,
            panels.replay_panel(answer, counts),
            panels.tree_panel(answer),
            panels.graph_panel(entry, seen) if entry else
            figures.empty_figure(panels.GRAPH_TITLE, missing),
            evidence_table(answer),
            cost_note(answer))


def _entry(library: Library, video_id: str) -> VideoEntry | None:
    try:
        return library.get(video_id)
    except NotFoundError:  # deleted since it was answered: the trace still explains the answer
        return None


def library_focus(library: Library, answer: dict,
                  video_id: str | None) -> tuple[VideoEntry | None, dict]:
    """The video a library answer's one-video panels show: the selected one where the answer
    names it (a chip was clicked), else the first it names that is still in the library; and
    the answer as seen from that video (its times there, no objects: ids are per video)."""
    named = sorted(answer.get("videos") or [], key=lambda v: v["video_id"] != video_id)
    for video in named:
        if entry := _entry(library, video["video_id"]):
            return entry, {**answer, "times": video.get("times") or [], "instance_ids": []}
    return None, answer
