"""One answer as it leaves the backend, and its parts: evidence steps, confidence, cost, memory.

backend.ask builds an `Answer`; the CLI, the app and the evaluation read its attributes and
call `as_dict()` only where it becomes JSON (CLI output, the app's panels, results files), so
the dict's keys are defined once, here, and stay those old runs and readers know.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from typing import Callable

from backend.memory_records import EntryRef
from models.llm import Usage


@dataclass(frozen=True)
class Step:
    """One tool step on a chosen path: what was asked of which tool and what it observed."""

    node: int                  # the step's node id in `Answer.tree`
    tool: str
    input: str
    observation: str
    times: list[float]         # video seconds the observation points at
    instance_ids: list[int]
    sql: str = ""              # the SQL a tool ran, if one did
    value: str = ""            # the tool's computed value, if it computed one
    support: str = ""          # computed, read, proxy, none or unobserved
    query: dict = field(default_factory=dict)  # the typed query the tool ran, if one did
    replayed: EntryRef | None = None  # the memory entry this step was replayed from

    @classmethod
    def of(cls, node) -> Step:
        """The step of a planner node (backend.agent.search_tree.Node)."""
        return cls(node=node.id, tool=node.action, input=node.action_input,
                   observation=node.observation, times=node.times,
                   instance_ids=node.instance_ids, sql=node.sql, value=node.value,
                   support=node.support, query=node.query, replayed=node.replayed)


@dataclass(frozen=True)
class Confidence:
    """How far to trust an answer (see backend.agent.confidence.confidence)."""

    level: str                 # high | medium | low | none
    basis: str                 # what the chosen answer rests on: computed, read, proxy, memory, ...
    agreement: str             # "agreeing/answered" candidate answers, e.g. "2/3"
    explanation: str           # the two above in a sentence for the user


@dataclass(frozen=True)
class Cost:
    """The LLM's use and the time an answer (or learning from it) took."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    other_seconds: float | None = None  # outside the LLM; learning does not report it
    cached_tokens: int = 0       # of prompt_tokens, taken from the server's cache (models.llm)
    prompt_seconds: float = 0.0  # of llm_seconds, reading prompts; 0 where the server does not say

    @classmethod
    def of(cls, usage: Usage, started: float, *, other: bool = True) -> Cost:
        """usage since `started` (time.monotonic()); other: report the time outside the LLM."""
        total = time.monotonic() - started
        return cls(llm_calls=usage.calls, prompt_tokens=usage.prompt_tokens,
                   completion_tokens=usage.completion_tokens, llm_seconds=round(usage.seconds, 2),
                   other_seconds=round(max(0.0, total - usage.seconds), 2) if other else None,
                   cached_tokens=usage.cached_tokens,
                   prompt_seconds=round(usage.prompt_seconds, 2))

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Lesson:
    """What one answer taught: the verdict and the entries written."""

    verdict: str                      # valid | invalid | skipped
    reason: str
    entry_id: str | None = None       # the semantic entry written or confirmed
    merged: bool = False              # True: an existing fact was updated, not a new one added
    workflow_id: str | None = None    # the procedural entry written
    pattern_refreshed: bool = False
    usage: Cost | None = None         # learning's own LLM use; None: learning did not run

    def as_dict(self) -> dict:
        if self.usage is None:  # skipped before learning ran: the short form readers know
            return {"verdict": self.verdict, "reason": self.reason, "usage": {}}
        return {**{f.name: getattr(self, f.name) for f in fields(self)},
                "usage": self.usage.as_dict()}


@dataclass(frozen=True)
class ReplayedEntry:
    """A memory entry replayed into this answer's context."""

    id: str
    kind: str
    text: str
    question: str
    similarity: float | None   # of its question to this one; None for a decision pattern
    video_id: str
    times: list[float]
    answer: str


@dataclass
class MemoryTrace:
    """What long-term memory did for one answer. With memory off only `enabled` (and what
    was learned, if anything) is reported."""

    enabled: bool = False
    asked: str = ""            # JSON of what the question named (backend.memory.reuse.Asked)
    p: float = 0.0             # P(q): the LLM's rating of the question's complexity
    e: float = 0.0             # E(q): keyword entropy in bits
    complexity: float = 0.0    # C(q), from P(q) and E(q)
    k_s: int = 0               # semantic entries replayed at most
    k_p: int = 0               # procedural entries replayed at most
    task_type: str = ""        # the rating's task type; '' when not rated
    replayed: list[ReplayedEntry] = field(default_factory=list)
    rated: bool = True         # False: P(q) could change no replay and no step read a pattern
    contradicted: list[str] = field(default_factory=list)  # facts the tables disagreed with
    decided_by: EntryRef | None = None  # the replayed entry the answer rests on
    # What the distilled model said (backend.memory.parametric.Consulted.as_dict), if asked.
    parametric: dict | None = None
    learned: Lesson | None = None

    def as_dict(self) -> dict:
        shown = asdict(self) if self.enabled else {"enabled": False}
        shown.pop("learned", None)
        if self.learned is not None:
            shown["learned"] = self.learned.as_dict()
        return shown


@dataclass
class Answer:
    """One answer to one question about one video, with how it was reached."""

    video_id: str
    question: str
    standalone_question: str     # the question with references to earlier turns resolved
    options: list[str] | None
    answer: str
    option: int | None
    answered: bool
    times: list[float]
    instance_ids: list[int]
    evidence: list[Step]         # the steps on the chosen paths
    tree: list[dict]             # every planner node (backend.agent.search_tree.Node) as a dict
    chosen_leaves: list[int] = field(default_factory=list)
    usage: Cost = field(default_factory=Cost)   # answering only; learning's is in memory.learned
    memory: MemoryTrace = field(default_factory=MemoryTrace)
    confidence: Confidence | None = None
    # A question across the library: the videos the answer names, each {video_id, name, times}.
    videos: list[dict] = field(default_factory=list)
    pending_learning: Callable[[], Lesson] | None = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict:
        shown = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "pending_learning"}
        shown.update(evidence=[asdict(s) for s in self.evidence], usage=self.usage.as_dict(),
                     memory=self.memory.as_dict(),
                     confidence=asdict(self.confidence) if self.confidence else {})
        return shown

    def learn(self) -> Lesson | None:
        """Learn from this answer now, if that was left for later; returns what was learned."""
        if self.pending_learning is not None:
            pending, self.pending_learning = self.pending_learning, None
            self.memory.learned = pending()
        return self.memory.learned
