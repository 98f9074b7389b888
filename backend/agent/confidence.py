"""How far to trust a planner's answer: what it rests on (its basis) and how many of the
solutions tried agree with it, against the measured precision of the measurement behind it
(`precision`)."""

from __future__ import annotations

from typing import Callable

from backend.agent import precision
from backend.agent.search_tree import ANSWER, Node
from backend.answer import Confidence


def basis(path: list[Node]) -> str:
    """What an answer after these steps rests on: the last observation's support ('computed',
    'read', 'none', 'unobserved'), or 'none' when no tool was called."""
    observed = [n for n in path if n.action and n.action != ANSWER and n.failure is None]
    if not observed:
        return "none"
    last = observed[-1]
    for weak in ("unobserved", "proxy", "unsupported"):
        if any(n.support == weak for n in observed) and last.support != "computed":
            return weak
    return last.support or "read"


_BASIS_WORDS = {"computed": "a value computed from the tables", "read": "the model's reading of "
                "what the tools returned", "proxy": "a stand-in: objects that may be what "
                "was asked (e.g. moving objects for cars)", "none": "no evidence",
                "unobserved": "nothing: ingest "
                "could not observe what the question needs", "memory": "facts from earlier answers",
                "nearest": "the option nearest a computed value that no option states",
                "derived": "the model's reading of a computed value that no option states",
                "contradicted": "a guess: the evidence computed fits none of the options",
                "unsupported": "one reading of the video's digest: nothing the video holds "
                "(kinds, actions, tags, speech, text on screen) speaks to any option, or holds "
                "any of what an open question asks for",
                "fallback": "a pick from what the search saw after every path of it failed"}


def confidence(nodes: list[Node], good: list[int], chosen: list[int], tried: int,
               trusted: Callable[[dict], bool] = precision.earns_high) -> Confidence:
    """How far to trust an answer: agreement of the answered leaves and the chosen one's basis.

    high: the chosen option is a computed value of a measurement `trusted` (measured precise
    in the video's conditions) and every answered leaf agrees; low: no evidence, unobservable,
    a stand-in, the nearest option to a computed value, or a minority answer; medium otherwise
    (a reading, of rows or of a computed value, is never high).
    """
    if not chosen:
        return Confidence(level="none", basis="none", agreement=f"0/{tried}",
                          explanation="no candidate answer")
    leaf_basis = nodes[chosen[0]].support or "none"
    agree = len(chosen) / len(good)
    measurement = _measurement(nodes, chosen[0]) if leaf_basis == "computed" else {}
    if leaf_basis in ("none", "unobserved", "proxy", "nearest", "contradicted", "unsupported",
                      "fallback") \
            or agree < 0.5:
        level = "low"
    elif leaf_basis == "computed" and agree == 1.0 and trusted(measurement):
        level = "high"
    else:
        level = "medium"
    explanation = (f"{len(chosen)} of {len(good)} candidate answers agree; the answer rests on "
                   f"{_BASIS_WORDS.get(leaf_basis, leaf_basis)}.")
    if leaf_basis == "computed":
        explanation += precision.described(measurement)
        if level == "medium" and agree == 1.0:
            explanation += " That kind of measurement is not measured precise enough to be high here."
    return Confidence(level=level, basis=leaf_basis, agreement=f"{len(chosen)}/{len(good)}",
                      explanation=explanation)


def _measurement(nodes: list[Node], leaf: int) -> dict:
    """The typed query (with its conditions) whose computed value the answer leaf states; where
    code picked the option from part of the evidence, that part is the conditions: the pick is
    trusted as far as what it rests on, not everything the query read."""
    parent = nodes[leaf].parent
    query = nodes[parent].query if parent is not None else {}
    if nodes[leaf].rests_on and query:
        return {**query, "conditions": "; ".join(nodes[leaf].rests_on)}
    return query
