"""The tree DoraemonGPT's planner grows (`planner`): its nodes, one ReAct step each; the choice
of the node to expand (softmax over rewards); the reward carried back from a leaf; and the
vote that merges the answers of several solutions to a multiple-choice question."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field

from backend.memory_records import EntryRef

ANSWER = "Answer"


@dataclass
class Node:
    id: int
    parent: int | None
    depth: int
    thought: str = ""
    action: str = ""
    action_input: str = ""
    observation: str = ""
    reward: float = 0.0
    visits: int = 0
    answer: str | None = None
    option: int | None = None
    failure: str | None = None
    children: list[int] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    instance_ids: list[int] = field(default_factory=list)
    sql: str = ""
    value: str = ""            # a tool's computed value
    support: str = ""          # a tool's: computed, read, none, unobserved; an answer's basis
    query: dict = field(default_factory=dict)     # the typed query a tool ran, if one did
    typed: dict = field(default_factory=dict)     # a tool's evidence as typed values
    replayed: EntryRef | None = None  # the memory entry this step was replayed from
    rests_on: list[str] = field(default_factory=list)  # an answer code picked: its evidence

    @property
    def is_leaf(self) -> bool:
        return self.answer is not None or self.failure is not None


def path_to(nodes: list[Node], node_id: int) -> list[Node]:
    """Root to `node_id`, both included."""
    chain = [nodes[node_id]]
    while chain[-1].parent is not None:
        chain.append(nodes[chain[-1].parent])
    return chain[::-1]


def softmax(values: list[float]) -> list[float]:
    top = max(values)
    weights = [math.exp(v - top) for v in values]
    total = sum(weights)
    return [w / total for w in weights]


def select_node(nodes: list[Node], rng: random.Random, max_depth: int) -> Node:
    """A non-leaf node that can still grow, drawn with probability softmax(reward)."""
    candidates = [n for n in nodes if not n.is_leaf and n.depth < max_depth]
    return rng.choices(candidates, weights=softmax([n.reward for n in candidates]))[0]


def backpropagate(nodes: list[Node], leaf_id: int, leaf_reward: float, beta: float) -> None:
    leaf = nodes[leaf_id]
    leaf.reward += leaf_reward
    distance, node = 1, leaf
    while node.parent is not None:
        node = nodes[node.parent]
        node.reward += leaf_reward * math.exp(beta * (1 - distance))
        distance += 1


def vote(picked: list[int]) -> tuple[Counter, int]:
    """(votes per option, the winner) of the options answered, in the order answered: the most
    votes win, a tie goes to the option answered first."""
    votes = Counter(picked)
    return votes, next(o for o in picked if votes[o] == max(votes.values()))
