"""Why an answer was wrong, decided by code from the steps it took, so a round of work starts
from the biggest class of misses instead of a guess.

- perception: no step observed evidence for the right answer (the tables never held it);
- reading: a step's evidence supports the right answer, but the pick contradicts it;
- routing: no step ran a typed query or a computation: the planner read memories or
  descriptions only, or asked the wrong tool;
- budget: no answer within the LLM-call or time budget.
"""

from __future__ import annotations

from backend.agent import meaning, option_match
from backend.agent.options import nearest_option, option_for_value

CLASSES = ("perception", "reading", "routing", "budget")
_OBSERVATION_CHARS = 300


def path(tree: list[dict], chosen: list[int]) -> list[dict]:
    """The tool steps of the chosen answer (or of the last solution tried, when none was
    chosen), each with its tool, input, observation (truncated), support and value."""
    if not tree:
        return []
    leaf = chosen[0] if chosen else max((n["id"] for n in tree if n.get("answer") is not None
                                          or n.get("failure") is not None), default=0)
    steps, node = [], tree[leaf]
    while node.get("parent") is not None:
        if node.get("action") and node["action"] != "Answer":
            steps.append({"tool": node["action"], "input": node.get("action_input", ""),
                          "observation": (node.get("observation") or "")[:_OBSERVATION_CHARS],
                          "support": node.get("support", ""), "value": node.get("value", ""),
                          "operation": (node.get("query") or {}).get("operation", "")})
        node = tree[node["parent"]]
    return steps[::-1]


def classify(tree: list[dict], answered: bool, options: list[str] | None, truth: int | None,
             truth_text: str | None) -> str:
    """The class of a wrong answer (`CLASSES`), from every tool step in its tree."""
    steps = [n for n in tree if n.get("action") and n["action"] != "Answer" and n.get("parent")
             is not None]
    failures = " ".join(n.get("failure") or "" for n in tree)
    if not answered and "budget" in failures:
        return "budget"
    typed = [n for n in steps if n.get("query") or n.get("typed") or n.get("value")]
    if not typed:
        return "routing"
    if any(_supports(n, options, truth, truth_text) for n in typed):
        return "reading"
    return "perception"


def _supports(node: dict, options: list[str] | None, truth: int | None,
              truth_text: str | None) -> bool:
    """Whether one step's evidence points at the right answer."""
    if node.get("support") in ("none", "unobserved"):
        return False
    if options is None or truth is None:
        wanted = (truth_text or "").strip().lower()
        return bool(wanted) and wanted in (node.get("observation") or "").lower()
    decision = option_match.decide(node.get("typed") or {}, options)
    if decision is not None and decision.supported:
        return truth in decision.supported
    value = node.get("value") or ""
    picked = (option_for_value(value, options) if value else None)
    picked = picked if picked is not None else meaning.option_meaning(value, options)
    picked = picked if picked is not None else nearest_option(value, options)
    return picked == truth
