"""Before planning: rate the question, pick k_s and k_p, and replay the most similar memories.

Semantic entries (this video's checked facts) and procedural entries (tool plans from any video)
are found by the similarity of their stored question to the new one, at least
`replay_min_similarity`; the decision pattern of the question's task type comes with them.
Every replayed entry's count goes up by one. A fact is replayed only to a question about the
same time, words and objects (`fits`): a count at 0.5 s says nothing about 2.0 s.

The LLM's rating P(q) and task type cost one call, and they only decide how many of the
candidates above the threshold are kept (k is 1 to 5) and which pattern comes along. So the
call is made only when that can change what is replayed: more than one candidate in a memory
and a k that P(q) can move (it weighs ALPHA = 0.03 in C(q), so only near a rounding boundary),
or a decision pattern to choose with no replayed workflow whose task type picks it. Where only
the pattern needs it, the rating waits until a planner step that may still call a tool reads
the pattern (`Recall.guide`): a pattern says which tools to call, so an answer computed by code,
or one the model may only choose among options, never pays for it. Otherwise C(q) is computed
with P(q) = 0 and the trace says the rating was not needed; learning rates the question after
the answer, off the answer's path, when it stores a workflow.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Literal

import numpy as np
from pydantic import BaseModel, Field

from backend.agent import prompts
from backend.agent.tools import ToolContext
from backend.answer import MemoryTrace, ReplayedEntry
from backend.memory.replay import MemoryOptions, complexity, keyword_entropy, replay_k
from backend.memory.store import MemoryStore
from backend.memory_records import MemoryEntry
from models.llm import LLMError

log = logging.getLogger(__name__)

TaskType = Literal["causal", "temporal", "descriptive"]


class Assessment(BaseModel):
    task_type: TaskType
    complexity: float = Field(ge=0.0, le=1.0)


@dataclass
class Recall:
    p: float
    e: float
    complexity: float
    k_s: int
    k_p: int
    task_type: str
    replayed: list[ReplayedEntry] = field(default_factory=list)
    rated: bool = True          # False: P(q) could change no replay and no step read a pattern
    facts: list[MemoryEntry] = field(default_factory=list)   # the replayed entries as stored
    plans: list[MemoryEntry] = field(default_factory=list)
    pattern: MemoryEntry | None = None
    contradicted: list[str] = field(default_factory=list)  # facts the tables disagreed with
    # The rating and the pattern it picks, still to be asked for: only the pattern needs them.
    pending: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def context(self) -> str:
        """The replayed facts and workflows, for every planner call."""
        return prompts.memory_context(self.facts, self.plans)

    def guide(self) -> str:
        """The decision pattern, for a planner step that may still call a tool; rated and
        picked now if that was left until it was needed."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending()
        return prompts.pattern_context(self.pattern)

    def drop(self, fact_ids: list[str]) -> None:
        """Stop replaying facts the tables contradict: the planner must not read them."""
        self.contradicted += fact_ids
        self.facts = [f for f in self.facts if f.id not in fact_ids]
        self.replayed = [r for r in self.replayed if r.id not in fact_ids]

    def trace(self, trace: MemoryTrace) -> None:
        """Report what was replayed, and why so much, in the answer's memory trace."""
        trace.p, trace.e = round(self.p, 3), round(self.e, 3)
        trace.complexity, trace.k_s, trace.k_p = round(self.complexity, 3), self.k_s, self.k_p
        trace.task_type, trace.replayed, trace.rated = self.task_type, self.replayed, self.rated
        trace.contradicted = self.contradicted


def assess(question: str, ctx: ToolContext) -> Assessment:
    """P(q) and the task type from one LLM call; a failed call counts as a simple descriptive one."""
    try:
        return ctx.complete(prompts.assess_messages(question), response_model=Assessment,
                            max_tokens=40).parsed
    except LLMError as e:
        log.warning("rating the question failed (%s); replaying as for a simple question", e)
        return Assessment(task_type="descriptive", complexity=0.0)


_K_MAX = 5  # replay_k's largest k
_FACT_CANDIDATES = 20


def recall(question: str, question_vector: np.ndarray, video_id: str, store: MemoryStore,
           options: MemoryOptions, rate: Callable[[], Assessment], min_similarity: float,
           always_rate: bool = False, fits: Callable[[MemoryEntry], bool] = lambda fact: True) -> Recall:
    """rate: the LLM's rating, called only when it can change the replay (or always_rate);
    fits: whether a fact is about what this question names (its time, words, objects)."""
    facts = plans = []
    if options.semantic:
        # Facts about other times of the same need are as similar as the right one: look deeper.
        facts = [f for f in store.search(kind="semantic", video_id=video_id, k=_FACT_CANDIDATES,
                                         min_similarity=min_similarity, vector=question_vector)
                 if fits(f)][:_K_MAX]
    if options.procedural:
        plans = store.search(kind="procedural", k=_K_MAX, min_similarity=min_similarity,
                             vector=question_vector)
    patterns = options.procedural and store.count("pattern") > 0
    e = keyword_entropy(question)
    # P(q) weighs ALPHA in C(q): the rating is asked for only where it can change k.
    choices = not options.fixed_k and (len(facts) > 1 or len(plans) > 1) and \
        replay_k(complexity(0.0, e)) != replay_k(complexity(1.0, e))
    # The task type that picks the decision pattern: the most similar validated workflow's,
    # where one is replayed, else the rating's.
    nearest_type = plans[0].task_type if plans else ""
    rated = always_rate or choices
    assessment = rate() if rated else _UNRATED
    c = complexity(assessment.complexity, e)
    k_s, k_p = options.fixed_k or (replay_k(c), replay_k(c))
    facts, plans = facts[:k_s], plans[:k_p]
    pattern = store.pattern(nearest_type or assessment.task_type) \
        if patterns and (nearest_type or rated) else None
    replayed = [_replayed(h) for h in facts + plans + ([pattern] if pattern else [])]
    store.count_replays(replayed)
    recalled = Recall(p=assessment.complexity, e=e, complexity=c, k_s=k_s, k_p=k_p,
                      task_type=assessment.task_type if rated else "", replayed=replayed,
                      rated=rated, facts=facts, plans=plans, pattern=pattern)
    if patterns and not (nearest_type or rated):
        recalled.pending = lambda: _rate_for_pattern(recalled, rate, store)
    return recalled


_UNRATED = Assessment(task_type="descriptive", complexity=0.0)


def _rate_for_pattern(recalled: Recall, rate: Callable[[], Assessment], store: MemoryStore) -> None:
    """The rating asked late, for the pattern alone: k stays as replayed (the rating could not
    move it, or it was not left to choose)."""
    assessment = rate()
    recalled.p, recalled.task_type, recalled.rated = assessment.complexity, assessment.task_type, True
    recalled.complexity = complexity(assessment.complexity, recalled.e)
    recalled.pattern = store.pattern(assessment.task_type)
    if recalled.pattern is not None:
        entry = _replayed(recalled.pattern)
        store.count_replays([entry])
        recalled.replayed.append(entry)


def _replayed(hit: MemoryEntry) -> ReplayedEntry:
    return ReplayedEntry(id=hit.id, kind=hit.kind, text=hit.text, question=hit.question,
                         similarity=None if hit.similarity is None else round(float(hit.similarity), 3),
                         video_id=hit.video_id, times=list(hit.times or []), answer=hit.answer)
