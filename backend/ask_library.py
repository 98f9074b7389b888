"""Answer one question across every video in the library (`ask --all-videos`, the chat's "all
videos" scope).

The Library tool (backend/agent/library_tool.py) searches every video first, with no LLM call;
a question about a kind of thing is answered by code from that search, naming videos and times.
Otherwise the planner reads what the search found, with the Library tool to search again.
"""

from __future__ import annotations

import time
from typing import Callable

from backend import giving_way
from backend.inputs import check_length
from backend.agent.library_tool import LibraryTool
from backend.agent.planner import GivenStep, Planner
from backend.agent.search_tree import Node
from backend.agent.tools import ToolContext
from backend.answer import Answer, Cost, Step
from backend.ask import planner_config, unanswered
from backend.config import Settings
from backend.factory import embedder_for, llm_for
from backend.library import Library
from backend.memory.store import MemoryStore
from models.llm import LLMError, Usage
from models.protocols import ChatModel, Embedder

LIBRARY = "library"  # the Answer's video_id when it speaks of the whole library


@giving_way.answering()
def ask_library(question: str, settings: Settings, *, options: list[str] | None = None,
                n_solutions: int | None = None, llm: ChatModel | None = None,
                embedder: Embedder | None = None,
                on_step: Callable[[Node], None] | None = None) -> Answer:
    """Plan over the Library tool and answer; faults become 'could not answer: ...'."""
    check_length(question)
    started = time.monotonic()
    usage = Usage()
    videos = Library(settings.home).list()
    if not videos:
        return unanswered(LIBRARY, question, options, "The library is empty: add a video first.",
                          usage, started)
    embedder = embedder or embedder_for(settings)
    tool = LibraryTool(videos, MemoryStore(settings, embed=embedder.embed),
                       sql_timeout_s=settings.sql_timeout_s, sql_max_rows=settings.sql_max_rows)
    ctx = ToolContext(video_id=LIBRARY, db_path=settings.home, memory_folder=settings.home,
                      llm=llm, embed=embedder.embed, usage=usage,
                      sql_timeout_s=settings.sql_timeout_s, sql_max_rows=settings.sql_max_rows)
    first = tool.run(question, ctx)
    if first.support != "computed" or options:
        try:
            ctx.llm = llm or llm_for(settings)
        except LLMError as e:
            return unanswered(LIBRARY, question, options, f"could not answer: {e}", usage, started)
    config = planner_config(settings, n_solutions)
    config.answered_by = (tool.name,)
    given = GivenStep(tool=tool.name, tool_input=question, observation=first, replayed=None,
                      thought="the question is about the whole library, so every video is "
                              "searched first")
    result = Planner([tool], ctx, config, on_step=on_step).solve(question, options, given=given)
    steps = [n for leaf in result.chosen_leaves for n in result.path(leaf)[1:]
             if n.action and n.action != "Answer"]
    found = {row["video_id"]: row for row in first.rows}
    named = [found.get(v.video_id, {"video_id": v.video_id, "name": v.name, "times": []})
             for v in videos if v.video_id in result.answer or v.name in result.answer]
    return Answer(video_id=LIBRARY, question=question, standalone_question=question,
                  options=options, answer=result.answer, option=result.option,
                  answered=result.answered, times=result.times, instance_ids=[],
                  evidence=[Step.of(n) for n in steps], tree=result.tree(),
                  chosen_leaves=result.chosen_leaves, usage=Cost.of(usage, started),
                  confidence=result.confidence, videos=named)
