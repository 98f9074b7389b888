"""Answer one question about one library video: LLM, tools and planner wired together."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from backend.agent.planner import Node, Planner, PlannerConfig
from backend.agent.tools import DocumentTool, EpisodicSearchTool, ToolContext, sub_task_tools
from backend.config import Settings
from backend.ingest import embedder_for
from backend.library import Library
from models.llm import ChatModel, LLMError, LLMUnavailable, OpenAIChat, Usage


@dataclass
class Answer:
    video_id: str
    question: str
    options: list[str] | None
    answer: str
    option: int | None
    answered: bool
    times: list[float]
    instance_ids: list[int]
    evidence: list[dict]        # the steps on the chosen paths: tool, input, observation, times
    tree: list[dict]
    usage: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def llm_for(settings: Settings) -> ChatModel:
    """The configured endpoint, or the embedded llama.cpp server (started once per process)."""
    if settings.llm_base_url:
        return OpenAIChat(settings.llm_base_url, settings.llm_model or "default",
                          api_key=settings.llm_api_key or "none", timeout=settings.llm_timeout_s)
    from models import weights
    from models.llama_server import get_embedded

    try:
        path = Path(settings.llm_gguf) if settings.llm_gguf else \
            weights.qwen_gguf(settings.cache_dir, settings.llm_size)
    except weights.WeightsError as e:
        raise LLMUnavailable(str(e)) from e
    server = get_embedded(path, n_ctx=settings.llm_ctx, threads=settings.llm_threads)
    return server.client(timeout=settings.llm_timeout_s)


def planner_config(settings: Settings, n_solutions: int | None = None) -> PlannerConfig:
    return PlannerConfig(n_solutions=n_solutions or settings.n_solutions,
                         max_depth=settings.max_steps, max_llm_calls=settings.max_llm_calls,
                         max_seconds=settings.max_answer_seconds)


def ask(video_id: str, question: str, settings: Settings, *, options: list[str] | None = None,
        n_solutions: int | None = None, llm: ChatModel | None = None,
        document: tuple[str, str] | None = None, context: str = "",
        on_step: Callable[[Node], None] | None = None) -> Answer:
    """Plan, call tools and answer. LLM faults never raise: they become 'could not answer: ...'."""
    entry = Library(settings.home).get(video_id)
    started = time.monotonic()
    usage = Usage()
    try:
        llm = llm or llm_for(settings)
    except LLMError as e:
        return _unanswered(video_id, question, options, f"could not answer: {e}", usage, started)
    embedder = embedder_for(settings)
    ctx = ToolContext(video_id=video_id, db_path=entry.db_path, memory_folder=entry.folder,
                      llm=llm, embed=embedder.embed, usage=usage,
                      sql_timeout_s=settings.sql_timeout_s, sql_max_rows=settings.sql_max_rows)
    tools = [*sub_task_tools(), EpisodicSearchTool()]
    if document:
        tools.append(DocumentTool.from_text(document[0], document[1], embedder.embed))
    planner = Planner(tools, ctx, planner_config(settings, n_solutions), on_step=on_step)
    result = planner.solve(question, options, context=context)
    evidence = [{"node": n.id, "tool": n.action, "input": n.action_input,
                 "observation": n.observation, "times": n.times, "instance_ids": n.instance_ids}
                for leaf in result.chosen_leaves for n in result.path(leaf)[1:]
                if n.action and n.action != "Answer"]
    return Answer(video_id=video_id, question=question, options=options, answer=result.answer,
                  option=result.option, answered=result.answered, times=result.times,
                  instance_ids=result.instance_ids, evidence=evidence, tree=result.tree(),
                  usage=_usage_dict(usage, started))


def _usage_dict(usage: Usage, started: float) -> dict:
    total = time.monotonic() - started
    return {"llm_calls": usage.calls, "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens, "llm_seconds": round(usage.seconds, 2),
            "other_seconds": round(max(0.0, total - usage.seconds), 2)}


def _unanswered(video_id, question, options, message, usage, started) -> Answer:
    return Answer(video_id=video_id, question=question, options=options, answer=message,
                  option=None, answered=False, times=[], instance_ids=[], evidence=[], tree=[],
                  usage=_usage_dict(usage, started))
