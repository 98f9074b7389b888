"""After an answer: check it, then keep what was learned (DigimonGPT, memory construction).

- Verdict: an answer whose option a computed value on its evidence names is valid by
  computation, and one whose evidence computes another option is invalid; neither costs an LLM
  call. Otherwise (the model read descriptions, rows or memory) the LLM validates the QA pair
  against the evidence the answer used and the video's closest memory segments.
- Semantic: a valid pair becomes a one-sentence summary stored with the question, answer,
  evidence times, verdict, what the question pinned down (time, quoted words, ids: `reuse.Asked`)
  and, when computed, the typed query and its value (so a replay can check it). A question close
  to a stored one of the same video, about the same time and words, updates that entry instead
  of adding a near-duplicate.
- Procedural: the tool workflow of a valid answer (tools in order, inputs with numbers
  abstracted, typed queries without their time) with the question's task type, shared across
  videos. When a task type has more than `PATTERN_AFTER` workflows, the LLM distils them into a
  decision pattern, refreshed every `PATTERN_REFRESH` new workflows.
- Only the kinds the answer's `MemoryOptions` replay are written, and an answer decided by a
  replayed entry that the tables confirmed adds nothing new: a replayed fact gains support.
"""

from __future__ import annotations

import json
import logging
import re

from pydantic import BaseModel, Field

from backend import episodic
from backend.agent import graph_tool, prompts
from backend.agent.options import option_for_value
from backend.agent.tools import ToolContext
from backend.answer import Answer, Lesson, Step
from backend.graph import facts as graph_facts
from backend.memory.recall import assess
from backend.memory.replay import MemoryOptions
from backend.memory.reuse import Asked, asked_of, fact_asked
from backend.memory.store import MemoryStore
from models.llm import LLMError

log = logging.getLogger(__name__)

PATTERN_AFTER = 5
PATTERN_REFRESH = 5
PATTERN_WORKFLOWS = 12          # most recent workflows shown to the pattern prompt
DUPLICATE_SIMILARITY = 0.9      # question similarity at which two facts are the same fact
_EVIDENCE_CHARS = 400


class Verdict(BaseModel):
    reason: str = Field(max_length=200)
    valid: bool
    summary: str = Field(max_length=240)


class Pattern(BaseModel):
    pattern: str = Field(max_length=500)


def workflow_of(evidence: list[Step]) -> list[dict]:
    """The tool steps of an answer with numbers abstracted, so the plan transfers to new
    questions; a typed query keeps its operation, target and words, and only whether it named
    a time (a replay resolves the new question's own)."""
    return [{"tool": step.tool, "input": re.sub(r"\d+(?:\.\d+)?", "N", step.input),
             **({"query": _portable(step.query)} if step.query else {})}
            for step in evidence]


def _portable(query: dict) -> dict:
    return {"operation": query["operation"], "target": query["target"], "words": query["words"],
            "timed": query["span"] is not None}


def computed_verdict(answer: Answer) -> tuple[bool, Step] | None:
    """(valid, step) when the last computed value on the evidence that names an option decides
    the verdict: valid if it names the chosen option, invalid if another; None when no computed
    value names an option (the model's reading decided, and the validator must judge)."""
    if not answer.options or answer.option is None:
        return None
    for step in reversed(answer.evidence):
        if step.support == "computed" and \
                (i := option_for_value(step.value, answer.options)) is not None:
            return i == answer.option, step
    return None


def render_workflow(steps: list[dict]) -> str:
    return " -> ".join([f"{s['tool']}({s['input']})" for s in steps] + ["Answer"])


def learn(answer: Answer, task_type: str | None, question_vector, store: MemoryStore,
          ctx: ToolContext, options: MemoryOptions = MemoryOptions()) -> Lesson:
    """`answer`: the Answer just given (answered, with evidence); task_type: None when the
    question was not rated before answering (rated here if a workflow is stored). LLM faults
    give 'skipped'."""
    if not (options.learns_facts or options.learns_workflows):
        return Lesson(verdict="skipped", reason="this answer's memory options replay nothing")
    computed = computed_verdict(answer)
    if computed is None:
        verdict = _validate(answer, question_vector, ctx)
        if isinstance(verdict, Lesson):
            return verdict
    elif not computed[0]:
        step = computed[1]
        return Lesson(verdict="invalid", reason=f"{step.tool} computed '{step.value}', "
                                                f"which is another option than the answer")
    else:
        verdict = _computed(answer, computed[1])
    if not verdict.valid or not verdict.summary.strip():
        return Lesson(verdict="invalid", reason=verdict.reason)
    if not _states(verdict.summary, answer.answer):
        # "The answer is correct based on the evidence provided." keeps nothing to replay.
        verdict = verdict.model_copy(update={
            "summary": f"{answer.standalone_question.strip()} {answer.answer.strip()}"[:240]})
    decided = answer.memory.decided_by
    entry_id, merged = None, False
    if options.learns_facts:
        if decided and decided.kind == "semantic":
            fact = store.get(decided.id)  # confirmed again: more support, no new entry
            store.update("semantic", fact.id, {"support": fact.support + 1})
            entry_id, merged = fact.id, True
        else:
            entry_id, merged = _keep_fact(answer, verdict, computed, question_vector, store, ctx)
        _graph_fact(answer, entry_id, ctx)
    steps = workflow_of(answer.evidence)
    # An answer straight from replayed facts has no tool plan to teach; one decided by a
    # replayed entry would only teach the plan that entry holds already.
    workflow_id, refreshed = None, False
    if options.learns_workflows and steps and not decided:
        if not task_type:  # not rated before answering: the workflow still needs its type
            task_type = assess(answer.standalone_question, ctx).task_type
            answer.memory.task_type = task_type
        workflow_id = store.add("procedural", {
            "video_id": answer.video_id, "question": answer.standalone_question,
            "text": render_workflow(steps), "answer": answer.answer, "task_type": task_type,
            "workflow": json.dumps(steps)}, question_vector)
        refreshed = _refresh_pattern(task_type, store, ctx)
    return Lesson(verdict="valid", reason=verdict.reason, entry_id=entry_id, merged=merged,
                  workflow_id=workflow_id, pattern_refreshed=refreshed)


def _states(summary: str, answer: str) -> bool:
    """Whether a fact's summary carries the answer: its numbers, or else one of its words of
    four letters or more (a summary that only judges the answer is no fact)."""
    said = summary.lower()
    numbers = re.findall(r"\d+(?:\.\d+)?", answer)
    if numbers:
        return all(re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", said) for n in numbers)
    words = [w for w in re.findall(r"[a-z]+", answer.lower()) if len(w) >= 4]
    return not words or any(w in said for w in words)


def _computed(answer: Answer, step: Step) -> Verdict:
    """The verdict and summary code writes for an answer a computed value decided."""
    said = " ".join(step.observation.split())[:160]
    return Verdict(reason=f"computed by {step.tool}: '{step.value}' is the chosen option",
                   valid=True, summary=f"{answer.standalone_question.strip()} {answer.answer} "
                                       f"(computed from the tables: {said})"[:240])


def _validate(answer: Answer, question_vector, ctx: ToolContext) -> "Verdict | Lesson":
    """The LLM's verdict on an answer that rests on a model's reading, or a skipped Lesson."""
    evidence = [f"{step.tool}({step.input}): {step.observation[:_EVIDENCE_CHARS]}"
                for step in answer.evidence]
    # Fine segments only: a whole-video summary ("8 people appear") reads to a small model as
    # contradicting a per-moment answer ("5 people in the first frame").
    segments = episodic.search(ctx.memory_folder, question_vector, scale="fine", k=2)
    evidence += [f"memory [{s['t_start']:.0f}-{s['t_end']:.0f} s]: {s['text'][:_EVIDENCE_CHARS]}"
                 for s in segments]
    evidence += [f"earlier checked fact: {r.text}" for r in answer.memory.replayed
                 if r.kind == "semantic"]
    try:
        return ctx.complete(prompts.validate_messages(answer.standalone_question, answer.answer,
                                                      evidence),
                            response_model=Verdict, max_tokens=160).parsed
    except LLMError as e:
        return Lesson(verdict="skipped", reason=f"validation failed: {e}")


def _keep_fact(answer: Answer, verdict: Verdict, computed: tuple[bool, Step] | None,
               question_vector,
               store: MemoryStore, ctx: ToolContext) -> tuple[str, bool]:
    duration = ctx.tables().duration
    asked = Asked.from_json(answer.memory.asked) or asked_of(answer.standalone_question, duration)
    # Near-duplicate questions about another time (or other words, other ids) are other facts.
    same = [f for f in store.search(kind="semantic", video_id=answer.video_id, k=5,
                                    min_similarity=DUPLICATE_SIMILARITY, vector=question_vector)
            if fact_asked(f, duration).same(asked)]
    step = computed[1] if computed else None
    query = ({**_portable(step.query), "tool": step.tool, "value": step.value}
             if step and step.query else {})
    values = {"question": answer.standalone_question, "answer": answer.answer,
              "text": verdict.summary.strip(), "times": [float(t) for t in answer.times],
              "verdict": verdict.reason, "asked": asked.to_json(),
              "query": json.dumps(query) if query else ""}
    if same:
        # The newer check wins: it saw the same question with the memory as it is now.
        store.update("semantic", same[0].id, {**values, "support": same[0].support + 1})
        return same[0].id, True
    return store.add("semantic", {**values, "video_id": answer.video_id, "support": 1},
                     question_vector), False


def _graph_fact(answer: Answer, entry_id: str, ctx: ToolContext) -> None:
    """The checked answer as an edge of the video's graph; a graph fault never costs the fact."""
    try:
        done = graph_facts.record(ctx.db_path, entry_id=entry_id,
                                  question=answer.standalone_question, answer=answer.answer,
                                  times=answer.times,
                                  source=graph_tool.about(answer.standalone_question, ctx),
                                  confidence=answer.confidence.level if answer.confidence else "medium")
        log.info("graph fact for %s: %s", entry_id, done)
    except Exception:  # noqa: BLE001 - the fact is kept in memory whatever the graph does
        log.exception("could not add the answer to the video's graph")


def _refresh_pattern(task_type: str, store: MemoryStore, ctx: ToolContext) -> bool:
    count = store.count("procedural", task_type)
    current = store.pattern(task_type)
    due = count > PATTERN_AFTER and (current is None or
                                     count >= current.n_workflows + PATTERN_REFRESH)
    if not due:
        return False
    workflows = [w for w in store.list("procedural") if w.task_type == task_type]
    shown = [f"\"{w.question}\": {w.text}" for w in workflows[-PATTERN_WORKFLOWS:]]
    try:
        pattern = ctx.complete(prompts.pattern_messages(task_type, shown),
                               response_model=Pattern, max_tokens=200).parsed
    except LLMError as e:
        log.warning("summarising %s workflows failed (%s); will retry with the next", task_type, e)
        return False
    store.upsert_pattern(task_type, pattern.pattern.strip(), count)
    return True
