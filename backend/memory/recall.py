"""Before planning: rate the question, pick k_s and k_p, and replay the most similar memories.

Semantic entries (this video's checked facts) and procedural entries (tool plans from any video)
are found by the similarity of their stored question to the new one, at least
`replay_min_similarity`; the decision pattern of the question's task type comes with them.
Every replayed entry's count goes up by one.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from backend.agent import prompts
from backend.agent.tools import ToolContext
from backend.memory.replay import MemoryOptions, complexity, keyword_entropy, replay_k
from backend.memory.store import MemoryStore
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
    replayed: list[dict] = field(default_factory=list)
    context: str = ""

    def trace(self) -> dict:
        shown = {k: v for k, v in asdict(self).items() if k != "context"}
        shown.update(p=round(self.p, 3), e=round(self.e, 3), complexity=round(self.complexity, 3))
        return shown


def assess(question: str, ctx: ToolContext) -> Assessment:
    """P(q) and the task type from one LLM call; a failed call counts as a simple descriptive one."""
    try:
        return ctx.complete(prompts.assess_messages(question), response_model=Assessment,
                            max_tokens=40).parsed
    except LLMError as e:
        log.warning("rating the question failed (%s); replaying as for a simple question", e)
        return Assessment(task_type="descriptive", complexity=0.0)


def recall(question: str, question_vector: np.ndarray, video_id: str, store: MemoryStore,
           options: MemoryOptions, assessment: Assessment, min_similarity: float) -> Recall:
    e = keyword_entropy(question)
    c = complexity(assessment.complexity, e)
    k_s, k_p = options.fixed_k or (replay_k(c), replay_k(c))
    facts = plans = []
    if options.semantic and k_s:
        facts = store.search(kind="semantic", video_id=video_id, k=k_s,
                             min_similarity=min_similarity, vector=question_vector)
    if options.procedural and k_p:
        plans = store.search(kind="procedural", k=k_p, min_similarity=min_similarity,
                             vector=question_vector)
    pattern = store.pattern(assessment.task_type) if options.procedural else None
    replayed = [_replayed(h) for h in facts + plans]
    if pattern:
        replayed.append(_replayed({**pattern, "similarity": None}))
    store.count_replays(replayed)
    return Recall(p=assessment.complexity, e=e, complexity=c, k_s=k_s, k_p=k_p,
                  task_type=assessment.task_type, replayed=replayed,
                  context=prompts.memory_context(facts, plans, pattern))


def _replayed(hit: dict) -> dict:
    similarity = hit.get("similarity")
    return {"id": hit["id"], "kind": hit["kind"], "text": hit["text"],
            "question": hit.get("question", ""),
            "similarity": None if similarity is None else round(float(similarity), 3),
            "video_id": hit.get("video_id", ""), "times": list(hit.get("times") or [])}
