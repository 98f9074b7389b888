"""Long-term memory's records: an entry as the store gives it, a reference to one, a replay count.

They live here, beside the memory package rather than in it, because the agent reads them too
(its Recall tool searches the store) and the memory package builds on the agent. `as_dict()` is
the one place an entry becomes the plain dict the CLI prints, the app shows and exports keep.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class EntryRef:
    """Which memory entry something came from: a replayed step, the entry an answer rests on."""

    id: str
    kind: str                  # semantic | procedural | pattern | episodic


@dataclass(frozen=True)
class MemoryEntry:
    """One memory entry, or one search hit (then with `similarity`).

    Every kind has the common fields; a field another kind has and this one does not is None
    and left out of `as_dict()`, so each kind keeps the keys it always had.
    """

    id: str
    kind: str                  # semantic | procedural | pattern | episodic (| tables: a Recall hit)
    video_id: str = ""         # semantic and episodic: the video; procedural: where it was learned
    question: str = ""         # the question the entry answers (its vector embeds this)
    text: str = ""             # what is replayed: the fact, the workflow, the pattern, the segment
    answer: str = ""
    task_type: str = ""        # procedural and pattern: causal | temporal | descriptive
    times: list[float] = field(default_factory=list)   # evidence times (episodic: start, end)
    created_at: str | None = ""
    updated_at: str | None = None
    verdict: str | None = None     # semantic: why the validator judged the answer valid
    support: int | None = None     # semantic: how many answers confirmed the fact
    asked: str | None = None       # semantic: time, quoted words, ids the question named (JSON)
    query: str | None = None       # semantic: the typed query that computed it, with its value (JSON)
    workflow: list[dict] | None = None  # procedural: the tool steps, numbers abstracted
    n_workflows: int | None = None  # pattern: how many workflows it was distilled from
    scale: str | None = None        # episodic: the temporal scale of the segment
    similarity: float | None = None  # search hits: cosine similarity of the questions
    replays: int | None = None      # how often the entry was replayed so far

    @property
    def ref(self) -> EntryRef:
        return EntryRef(self.id, self.kind)

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class ReplayCount:
    """How often one entry (episodic included) was replayed, from the store's replay table."""

    id: str
    kind: str
    video_id: str
    text: str                  # the entry's text when last replayed (its first 500 characters)
    replays: int
    last_replayed: str         # ISO time in UTC

    def as_dict(self) -> dict:
        return asdict(self)
