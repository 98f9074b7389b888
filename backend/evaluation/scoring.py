"""Scoring: right or wrong per question, accuracy per NExT-QA type group with 95% intervals, cost.

Groups follow NExT-QA: causal C = CW + CH, temporal T = TN + TC + TP, descriptive D = DC + DL +
DO, and all. Types of other files (IntentQA's "TP&TN", MSRVTT's what/who/...) that are not NExT-QA
codes form groups of their own. A question that raised an error, or that the agent could not
answer, counts as wrong: the denominator is every question asked.

Intervals are Wilson score intervals (95%): with tens of questions the normal approximation
p +- 1.96 sqrt(p(1-p)/n) is far off, and gives [1, 1] for 14 of 14.
"""

from __future__ import annotations

import math
import re

Z95 = 1.959963984540054
GROUPS = {"C": ("CW", "CH"), "T": ("TN", "TC", "TP"), "D": ("DC", "DL", "DO")}
GROUP_NAMES = {"C": "causal", "T": "temporal", "D": "descriptive", "all": "all"}
# Per-answer cost fields of a result record (see runner.py); learn_* is the learning step.
COST_KEYS = ("llm_calls", "prompt_tokens", "cached_tokens", "completion_tokens", "llm_seconds",
             "prompt_seconds", "other_seconds", "seconds", "learn_llm_calls",
             "learn_prompt_tokens", "learn_completion_tokens", "learn_llm_seconds", "tree_size",
             "replayed")


def group_of(type_code: str) -> str:
    codes = [c for c in re.split(r"[&+/,\s]+", type_code.upper()) if c]
    for group, members in GROUPS.items():
        if codes and all(c in members for c in codes):
            return group
    return type_code


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for `correct` successes in `n` trials; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def normalise_answer(text: str) -> str:
    """Lower case, no punctuation or articles, single spaces: for open-ended exact match."""
    words = re.sub(r"[^\w\s]", " ", text.lower()).split()
    return " ".join(w for w in words if w not in ("a", "an", "the"))


def open_ended_match(predicted: str, truth: str) -> tuple[bool, bool]:
    """(exact, contains): normalised exact match, and the truth appearing as whole words."""
    p, t = normalise_answer(predicted), normalise_answer(truth)
    return p == t, bool(t) and f" {t} " in f" {p} "


def _row(name: str, records: list[dict]) -> dict:
    n = len(records)
    correct = sum(bool(r["correct"]) for r in records)
    low, high = wilson(correct, n)
    return {"group": name, "name": GROUP_NAMES.get(name, name), "n": n, "correct": correct,
            "errors": sum(r.get("error") is not None for r in records),
            "accuracy": round(correct / n, 4) if n else None,
            "ci_low": round(low, 4), "ci_high": round(high, 4)}


def accuracy_by_group(records: list[dict]) -> list[dict]:
    """C, T, D (those present), other types alphabetically, then all."""
    by_group: dict[str, list[dict]] = {}
    for r in records:
        by_group.setdefault(group_of(r["type"]), []).append(r)
    order = [g for g in GROUPS if g in by_group] + sorted(g for g in by_group if g not in GROUPS)
    return [_row(g, by_group[g]) for g in order] + [_row("all", records)]


def accuracy_by_type(records: list[dict]) -> list[dict]:
    by_type: dict[str, list[dict]] = {}
    for r in records:
        by_type.setdefault(r["type"], []).append(r)
    return [_row(t, by_type[t]) for t in sorted(by_type)]


def cost_per_answer(records: list[dict]) -> dict:
    """Mean of each cost field over the questions that did not raise an error."""
    done = [r for r in records if r.get("error") is None]
    return {key: round(sum(r.get(key) or 0 for r in done) / len(done), 2) if done else None
            for key in COST_KEYS}


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank q-quantile: a value that was measured, never one between two."""
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))], 2)


def answer_time(records: list[dict]) -> dict | None:
    """Seconds from question to answer shown (learning after it excluded): p50, p90, max, over
    the questions that did not raise an error. The figure a user waits for, and #51's target."""
    seconds = [r["answer_seconds"] if "answer_seconds" in r else
               # records from before answer_seconds: the LLM's and the other seconds
               (r.get("llm_seconds") or 0.0) + (r.get("other_seconds") or 0.0)
               for r in records if r.get("error") is None]
    if not seconds:
        return None
    return {"n": len(seconds), "p50": percentile(seconds, 0.5), "p90": percentile(seconds, 0.9),
            "max": round(max(seconds), 2)}


CONFIDENCE_LEVELS = ("high", "medium", "low", "none")


def by_confidence(records: list[dict]) -> dict:
    """{level: {"right", "of"}} for the levels the answers said (runs from before answers carried
    a confidence have none), and the precision of "high": what the label is worth."""
    levels = {level: {"right": sum(bool(r["correct"]) for r in records
                                   if r.get("confidence") == level),
                      "of": sum(r.get("confidence") == level for r in records)}
              for level in CONFIDENCE_LEVELS}
    high = levels["high"]
    return {"levels": {k: v for k, v in levels.items() if v["of"]},
            "high_precision": round(high["right"] / high["of"], 3) if high["of"] else None}


def by_failure(records: list[dict]) -> dict:
    """{class: count} of the wrong answers (`failures.classify`); an error that stopped the
    question is 'error', a record from before the classes 'unclassified'."""
    counts: dict[str, int] = {}
    for r in records:
        if not r.get("correct"):
            name = "error" if r.get("error") else r.get("failure") or "unclassified"
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def summarize(records: list[dict]) -> dict:
    open_ended = [r for r in records if r.get("truth") is None]
    return {
        "questions": len(records),
        "errors": sum(r.get("error") is not None for r in records),
        "unanswered": sum(not r.get("answered") for r in records),
        "groups": accuracy_by_group(records) if records else [],
        "types": accuracy_by_type(records),
        "cost_per_answer": cost_per_answer(records),
        "answer_time": answer_time(records),
        "by_confidence": by_confidence(records),
        "failures": by_failure(records),
        "open_ended": {"n": len(open_ended),
                       "exact": sum(bool(r["correct"]) for r in open_ended),
                       "contains": sum(bool(r.get("contains")) for r in open_ended)},
    }
