"""Answer one question about one library video: LLM, tools, memory and planner wired together.

One answer: rewrite a follow-up into a standalone question (short-term chat memory) -> replay
semantic and procedural memory (rating the question only when that can change what is
replayed) -> ask the distilled model where the video was distilled (parametric memory) -> plan
with the tools -> validate the answer and learn from it. Learning's LLM calls
are counted apart from answering's, and with `learn_now=False` they wait until the caller has
shown the answer (`Answer.learn()`), so learning never delays it; nor, on a model of this
machine, the next question: learning gives way to any question being answered
(backend/giving_way.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Callable

from backend.agent import coverage, followup, meaning, precision, prompts, routing
from backend.agent.planner import PARAMETRIC, GivenStep, Planner, PlannerConfig
from backend.agent.search_tree import Node
from backend.agent import graph_tool
from backend.agent.graph_tool import GraphTool
from backend.agent.tools import DocumentTool, RecallTool, ToolContext, sub_task_tools
from backend.answer import Answer, Cost, Lesson, MemoryTrace, Step
from backend import giving_way
from backend.config import Settings
from backend.factory import embedder_for, llm_for, parametric_llm
from backend.inputs import check_length
from backend.library import Library, VideoEntry
from backend.memory.learn import learn
from backend.memory import parametric, reuse
from backend.memory.recall import Recall, assess, recall
from backend.memory.replay import MemoryOptions
from backend.memory.store import MemoryStore
from backend.memory_records import EntryRef
from models.llm import LLMError, Usage
from models.protocols import ChatModel, Embedder

log = logging.getLogger(__name__)


def planner_config(settings: Settings, n_solutions: int | None = None) -> PlannerConfig:
    return PlannerConfig(n_solutions=n_solutions or settings.n_solutions,
                         max_depth=settings.max_steps, max_llm_calls=settings.max_llm_calls,
                         max_seconds=settings.max_answer_seconds,
                         grounded=settings.agent == "grounded",
                         trusted=precision.earns_high if settings.answer_checks else _declared)


def _declared(query: dict) -> bool:
    """Without the answer checks, a computed value is high whatever its measured record."""
    return True


def ask(video_id: str, question: str, settings: Settings, *, options: list[str] | None = None,
        n_solutions: int | None = None, llm: ChatModel | None = None,
        embedder: Embedder | None = None,
        document: tuple[str, str] | None = None, history: list[tuple[str, str]] | None = None,
        memory: MemoryOptions | None = None,
        on_step: Callable[[Node], None] | None = None, learn_now: bool = True) -> Answer:
    """Plan, call tools and answer. LLM faults never raise: they become 'could not answer: ...'.

    llm, embedder: the models to use; by default the configured ones (backend/factory.py).
    history: earlier (question, answer) turns of this chat, oldest first.
    learn_now: False leaves learning to `Answer.learn()`, for callers that show the answer first.
    """
    with giving_way.answering():
        answer = _answer(video_id, question, settings, options=options, n_solutions=n_solutions,
                         llm=llm, embedder=embedder, document=document, history=history,
                         memory=memory, on_step=on_step)
    if learn_now:
        answer.learn()
    return answer


def _answer(video_id: str, question: str, settings: Settings, *, options: list[str] | None,
            n_solutions: int | None, llm: ChatModel | None, embedder: Embedder | None,
            document: tuple[str, str] | None, history: list[tuple[str, str]] | None,
            memory: MemoryOptions | None, on_step: Callable[[Node], None] | None) -> Answer:
    check_length(question)
    entry = Library(settings.home).get(video_id)
    started = time.monotonic()
    usage = Usage()
    memory = memory or (MemoryOptions() if settings.memory else MemoryOptions.off())
    try:
        llm = llm or llm_for(settings)
    except LLMError as e:
        return unanswered(video_id, question, options, f"could not answer: {e}", usage, started)
    embedder = embedder or embedder_for(settings)
    ctx = ToolContext(video_id=video_id, db_path=entry.db_path, memory_folder=entry.folder,
                      llm=llm, embed=embedder.embed, usage=usage,
                      sql_timeout_s=settings.sql_timeout_s, sql_max_rows=settings.sql_max_rows,
                      typed_queries=settings.agent == "grounded")
    turns = (history or [])[-settings.chat_turns:] if settings.chat_turns > 0 else []
    standalone = followup.standalone(question, turns, ctx.complete)
    context = [prompts.chat_context(turns)] if turns else []
    trace = MemoryTrace(enabled=memory.enabled)
    store = MemoryStore(settings, embed=embedder.embed)
    vector = embedder.embed([standalone])[0]
    config = planner_config(settings, n_solutions)
    given, recalled = None, None
    # One reader of the video's tables for the whole question: its facts (duration, categories,
    # conditions) are read once, by memory, routing and coverage alike.
    tables = ctx.tables()
    # "Is the person sitting or standing?" asks to choose: its own alternatives are its options
    # where code can decide among them (asked open, it was answered "Yes: #1 standing ..." or
    # searched for). Ways keep the movement query's tally, which says how many go each way.
    own = routing.AskedChoice()
    if not options and config.grounded and settings.answer_checks and \
            not meaning.ways(standalone):
        own = routing.asked_choice(standalone, tables)
        options = own.options
    if memory.enabled:
        duration = tables.duration
        asked = reuse.asked_of(standalone, duration)
        trace.asked = asked.to_json()
        recalled = recall(standalone, vector, video_id, store, memory,
                          lambda: assess(standalone, ctx), settings.replay_min_similarity,
                          always_rate=not config.grounded,
                          fits=lambda fact: reuse.fact_asked(fact, duration).same(asked))
        if config.grounded:
            replay = reuse.first_step(recalled.facts, recalled.plans, standalone, tables)
            recalled.drop(replay.contradicted)
            given = replay.given
        context.insert(0, recalled.context)
        config.stop_on_direct_answer = any(r.kind == "semantic" for r in recalled.replayed)
    # An open question: the evidence written down by code, told once. The rewrite of a
    # follow-up may have turned "what happens in this video?" into a narrower question; the
    # question as asked still asks for the account.
    if config.grounded and settings.answer_checks and not options and \
            (told := routing.digest_step(standalone, tables)
             or routing.digest_step(question, tables)) is not None:
        given = told
    elif config.grounded and settings.answer_checks and \
            (route := routing.route(standalone, tables.duration, options)) is not None and \
            (given is None or _operation(given) != route[0]):
        # The question's own words outrank a similar question's memory: a count replayed for
        # "how many seconds in does the last person arrive" was answered with a time. A replay
        # of the routed operation stands, and its query is not run twice.
        given = (own.routed if own.options else
                 routing.first_step(standalone, tables, options)) or given
    if own.untold is not None and _no_fact(given):
        given = own.untold
    # The distilled model, only where neither memory's typed query nor the question's own words
    # gave a first step: a value the tables compute outranks what the weights remember.
    if given is None and recalled is not None and config.grounded and memory.semantic and \
            settings.parametric and \
            (consulted := _consult(standalone, entry, recalled, settings, usage)):
        given = parametric.given_step(consulted, standalone, settings.parametric_min_p)
        trace.parametric = consulted.as_dict()
    # A routed step whose evidence speaks to no option is no better than none: either way, with
    # nothing in the video speaking to any option, one reading of the digest chooses. Replayed
    # facts that may answer the question keep the planner's way with them, and a routed step
    # that says ingest cannot observe what is asked (no audio track) keeps its own reason.
    if options and config.grounded and settings.answer_checks and \
            not config.stop_on_direct_answer and _no_fact(given) and \
            (given is None or given.observation.support != "unobserved") and \
            (hopeless := routing.unsupported_step(standalone, tables, options)) is not None:
        given = hopeless
    tools = [*sub_task_tools(), RecallTool(store=store, facts=memory.semantic,
                                           graph=graph_tool.memories), GraphTool()]
    if document:
        tools.append(DocumentTool.from_text(document[0], document[1], embedder.embed))
    planner = Planner(tools, ctx, config, on_step=on_step)
    result = planner.solve(standalone, options, context="\n\n".join(c for c in context if c),
                           given=given, guide=recalled.guide if recalled else None)
    if recalled is not None:
        recalled.trace(trace)  # after planning: a step may have asked for the rating
        trace.decided_by = _decided_by(result, recalled)
    evidence = [Step.of(n) for leaf in result.chosen_leaves for n in result.path(leaf)[1:]
                if n.action and n.action != "Answer"]
    if trace.parametric:
        trace.parametric["decided"] = result.confidence.basis == "memory" and \
            any(step.tool == PARAMETRIC for step in evidence)
    confidence = result.confidence
    if options and result.option is not None and settings.answer_checks:
        confidence = coverage.flag_unseen(confidence, options[result.option], tables)
    if own.options:  # asked open, answered in its own words: no options to point into
        if result.option is not None:
            said = own.options[result.option]
            result = replace(result, answer=said[:1].upper() + said[1:], option=None)
        options = None
    answer = Answer(video_id=video_id, question=question, standalone_question=standalone,
                    options=options, answer=result.answer, option=result.option,
                    answered=result.answered, times=result.times,
                    instance_ids=result.instance_ids, evidence=evidence, tree=result.tree(),
                    chosen_leaves=result.chosen_leaves, usage=Cost.of(usage, started),
                    memory=trace, confidence=confidence)
    if memory.learn:
        answer.pending_learning = lambda: _learn(answer, memory, vector, store, ctx)
    return answer


def _consult(question: str, entry: VideoEntry, recalled: Recall, settings: Settings,
             usage: Usage) -> parametric.Consulted | None:
    """The distilled model's answer, where this video was distilled; its call is counted."""
    done = parametric.manifest(settings)
    if done is None or entry.video_id not in done.videos:
        return None
    try:
        model = parametric_llm(settings, parametric.adapter_path(settings), done.base)
    except LLMError as e:
        log.warning("parametric memory is not asked: %s", e)
        return None
    consulted = parametric.consult(model, entry.name, question,
                                   parametric.unedited(recalled.facts, entry.db_path), done)
    if consulted is not None:
        usage.add(consulted.usage)
    return consulted


def _no_fact(given: GivenStep | None) -> bool:
    """Whether the first step, if any, is only a typed query run on this video: the question's
    own, or a replayed workflow's (a similar question's way of asking, which finds no more here
    than the routed query does: one such replay had searched 12 calls, 179 s, for nothing), not a
    remembered fact or the distilled model's answer."""
    return given is None or (given.tool != PARAMETRIC and (
        given.replayed is None or given.replayed.kind == "procedural"))


def _operation(step: GivenStep) -> str:
    return step.observation.query.get("operation", "")


def _decided_by(result, recalled: Recall) -> EntryRef | None:
    """The replayed entry the answer rests on: the one whose step it follows, or, for an answer
    read from the replayed facts alone, the fact that gave that very answer."""
    if result.decided_by:
        return result.decided_by
    if result.confidence.basis != "memory":
        return None
    return next((f.ref for f in recalled.facts
                 if f.answer and f.answer.strip().lower() == result.answer.strip().lower()), None)


def _learn(answer: Answer, memory: MemoryOptions, vector, store: MemoryStore,
           ctx: ToolContext) -> Lesson:
    if not answer.answered:
        return Lesson(verdict="skipped", reason="not answered")
    learning = replace(ctx, usage=Usage(), llm=giving_way.GivingWay(ctx.llm))
    started = time.monotonic()
    try:
        lesson = learn(answer, answer.memory.task_type, vector, store, learning, memory)
    except Exception as e:  # a memory fault must never cost the user the answer just given
        log.exception("learning from the answer failed")
        return Lesson(verdict="skipped", reason=f"learning failed: {e}")
    return replace(lesson, usage=Cost.of(learning.usage, started, other=False))


def unanswered(video_id, question, options, message, usage, started) -> Answer:
    return Answer(video_id=video_id, question=question, standalone_question=question,
                  options=options, answer=message, option=None, answered=False, times=[],
                  instance_ids=[], evidence=[], tree=[], usage=Cost.of(usage, started))


def check_llm(settings: Settings) -> str:
    """One tiny completion through the configured LLM, for the app's "Test connection" button.

    Raises LLMError (with a message meant for the user) when the endpoint is down or refuses.
    """
    started = time.monotonic()
    llm = llm_for(settings)
    reply = llm.complete([{"role": "user", "content": "Say OK"}], max_tokens=5)
    return (f"Connected: {llm.name} at {llm.base_url} answered “{reply.text.strip()}” in "
            f"{time.monotonic() - started:.1f} s.")
