"""How much to replay: question complexity C(q) and the replay sizes k_s, k_p (DigimonGPT eq. 2-4).

C(q) = alpha * P(q) + beta * E(q), clamped to [0, 1], with P(q) an LLM rating in [0, 1] and E(q)
the Shannon entropy (bits) of the question's keyword frequencies after NLTK stopword removal.
k = round(k_min + C(q) * (k_max - k_min)), k in [1, 5], rounding halves up.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from models.keywords import keywords

ALPHA = 0.03
BETA = 0.2
K_MIN, K_MAX = 1, 5


@dataclass(frozen=True)
class MemoryOptions:
    """Which memories one answer replays and whether it learns; fixed_k = (k_s, k_p) overrides C(q).

    Learning writes only the kinds that are replayed: a fact nobody reads, or a workflow, would
    cost learning's LLM calls for nothing."""

    semantic: bool = True
    procedural: bool = True
    learn: bool = True
    fixed_k: tuple[int, int] | None = None

    @classmethod
    def off(cls) -> "MemoryOptions":
        return cls(semantic=False, procedural=False, learn=False)

    @property
    def learns_facts(self) -> bool:
        return self.learn and self.semantic

    @property
    def learns_workflows(self) -> bool:
        return self.learn and self.procedural

    @property
    def enabled(self) -> bool:
        return self.semantic or self.procedural or self.learn


def keyword_entropy(question: str) -> float:
    counts = Counter(keywords(question))
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values()) if total else 0.0


def complexity(p: float, e: float) -> float:
    return min(1.0, max(0.0, ALPHA * p + BETA * e))


def replay_k(c: float) -> int:
    return math.floor(K_MIN + c * (K_MAX - K_MIN) + 0.5)
