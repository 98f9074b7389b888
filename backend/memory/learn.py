"""After an answer: check it, then keep what was learned (DigimonGPT, memory construction).

- Semantic: the LLM validates the QA pair against the evidence the answer used and the
  video's closest memory segments; a valid pair becomes a one-sentence summary stored with
  the question, answer, evidence times and verdict. A question close to a stored one of the
  same video updates that entry instead of adding a near-duplicate.
- Procedural: the tool workflow of a valid answer (tools in order, inputs with numbers
  abstracted) with the question's task type, shared across videos. When a task type has more
  than `PATTERN_AFTER` workflows, the LLM distils them into a decision pattern, refreshed every
  `PATTERN_REFRESH` new workflows.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from pydantic import BaseModel, Field

from backend import episodic
from backend.agent import prompts
from backend.agent.tools import ToolContext
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


@dataclass
class Lesson:
    """What one answer taught: the verdict and the entries written."""

    verdict: str                      # valid | invalid | skipped
    reason: str
    entry_id: str | None = None
    merged: bool = False
    workflow_id: str | None = None
    pattern_refreshed: bool = False


def workflow_of(evidence: list[dict]) -> list[dict]:
    """The tool steps of an answer with numbers abstracted, so the plan transfers to new questions."""
    return [{"tool": step["tool"], "input": re.sub(r"\d+(?:\.\d+)?", "N", step["input"])}
            for step in evidence]


def render_workflow(steps: list[dict]) -> str:
    return " -> ".join([f"{s['tool']}({s['input']})" for s in steps] + ["Answer"])


def learn(answer, task_type: str, question_vector, store: MemoryStore, ctx: ToolContext) -> Lesson:
    """`answer`: the Answer just given (answered, with evidence). LLM faults give 'skipped'."""
    evidence = [f"{step['tool']}({step['input']}): {step['observation'][:_EVIDENCE_CHARS]}"
                for step in answer.evidence]
    # Fine segments only: a whole-video summary ("8 people appear") reads to a small model as
    # contradicting a per-moment answer ("5 people in the first frame").
    segments = episodic.search(ctx.memory_folder, question_vector, scale="fine", k=2)
    evidence += [f"memory [{s['t_start']:.0f}-{s['t_end']:.0f} s]: {s['text'][:_EVIDENCE_CHARS]}"
                 for s in segments]
    evidence += [f"earlier checked fact: {r['text']}" for r in answer.memory.get("replayed", [])
                 if r["kind"] == "semantic"]
    try:
        verdict = ctx.complete(prompts.validate_messages(answer.standalone_question, answer.answer,
                                                         evidence),
                               response_model=Verdict, max_tokens=160).parsed
    except LLMError as e:
        return Lesson(verdict="skipped", reason=f"validation failed: {e}")
    if not verdict.valid or not verdict.summary.strip():
        return Lesson(verdict="invalid", reason=verdict.reason)
    lesson = Lesson(verdict="valid", reason=verdict.reason)
    lesson.entry_id, lesson.merged = _keep_fact(answer, verdict, question_vector, store)
    steps = workflow_of(answer.evidence)
    if steps:  # an answer straight from replayed facts has no tool plan to teach
        lesson.workflow_id = store.add("procedural", {
            "video_id": answer.video_id, "question": answer.standalone_question,
            "text": render_workflow(steps), "answer": answer.answer, "task_type": task_type,
            "workflow": json.dumps(steps)}, question_vector)
        lesson.pattern_refreshed = _refresh_pattern(task_type, store, ctx)
    return lesson


def _keep_fact(answer, verdict: Verdict, question_vector, store: MemoryStore) -> tuple[str, bool]:
    same = store.search(kind="semantic", video_id=answer.video_id, k=1,
                        min_similarity=DUPLICATE_SIMILARITY, vector=question_vector)
    values = {"question": answer.standalone_question, "answer": answer.answer,
              "text": verdict.summary.strip(), "times": [float(t) for t in answer.times],
              "verdict": verdict.reason}
    if same:
        # The newer check wins: it saw the same question with the memory as it is now.
        store.update("semantic", same[0]["id"], {**values, "support": same[0]["support"] + 1})
        return same[0]["id"], True
    return store.add("semantic", {**values, "video_id": answer.video_id, "support": 1},
                     question_vector), False


def _refresh_pattern(task_type: str, store: MemoryStore, ctx: ToolContext) -> bool:
    count = store.count("procedural", task_type)
    current = store.pattern(task_type)
    due = count > PATTERN_AFTER and (current is None or
                                     count >= current["n_workflows"] + PATTERN_REFRESH)
    if not due:
        return False
    workflows = [w for w in store.list("procedural") if w["task_type"] == task_type]
    shown = [f"\"{w['question']}\": {w['text']}" for w in workflows[-PATTERN_WORKFLOWS:]]
    try:
        pattern = ctx.complete(prompts.pattern_messages(task_type, shown),
                               response_model=Pattern, max_tokens=200).parsed
    except LLMError as e:
        log.warning("summarising %s workflows failed (%s); will retry with the next", task_type, e)
        return False
    store.upsert_pattern(task_type, pattern.pattern.strip(), count)
    return True
