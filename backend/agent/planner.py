"""The Monte Carlo tree search planner of DoraemonGPT (section 2.3), done as the paper says.

The root is the question; every other node is one ReAct step (thought, action, action input,
observation); a leaf also carries an answer or a failure. Each of N iterations:

1. select a non-leaf node with probability softmax(R) over node rewards (iteration 1: the root);
2. expand it with a child whose action differs from its existing children (listed in the prompt);
3. execute a ReAct chain from that child until an answer or a failure (tool error, bad format,
   step limit);
4. back-propagate R_leaf = +alpha (answer) or -alpha (failure) to every ancestor v:
   R_v += R_leaf * exp(beta * (1 - d(v, leaf))), d counted in edges; the leaf itself keeps R_leaf.

Then the non-failure answers are merged: a vote for multiple choice, an LLM summary otherwise.
The public DoraemonGPT code rewarded failures positively and never merged its answers.
"""

from __future__ import annotations

import logging
import math
import random
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Callable, Literal

from pydantic import BaseModel, Field, create_model

from backend.agent import prompts
from backend.agent.tools import Observation, Tool, ToolContext, unquoted_numbers
from models.llm import LLMError, Usage

log = logging.getLogger(__name__)

ANSWER = "Answer"


@dataclass
class PlannerConfig:
    n_solutions: int = 2       # N iterations; 1 = greedy ReAct
    alpha: float = 1.0         # base reward
    beta: float = 0.5          # decay of the reward with distance from the leaf
    max_depth: int = 5         # steps in one chain, answer included
    max_llm_calls: int = 40    # for the whole question, sub-agents included
    max_seconds: float = 600.0
    seed: int = 0
    # Replayed facts can answer a question outright; then the other iterations are not needed.
    stop_on_direct_answer: bool = False


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

    @property
    def is_leaf(self) -> bool:
        return self.answer is not None or self.failure is not None


@dataclass
class PlanResult:
    answer: str
    option: int | None
    answered: bool
    nodes: list[Node]
    chosen_leaves: list[int]
    usage: Usage
    seconds: float

    def tree(self) -> list[dict]:
        return [asdict(n) for n in self.nodes]

    @property
    def times(self) -> list[float]:
        return sorted({t for leaf in self.chosen_leaves for n in self.path(leaf) for t in n.times})

    @property
    def instance_ids(self) -> list[int]:
        ids = [i for leaf in self.chosen_leaves for n in self.path(leaf) for i in n.instance_ids]
        return list(dict.fromkeys(ids))

    def path(self, node_id: int) -> list[Node]:
        return path_to(self.nodes, node_id)


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


def choose_option(text: str, options: list[str]) -> int | None:
    """The option an answer names: its number, its letter, or its text."""
    cleaned = text.strip().lower().rstrip(".")
    number = re.fullmatch(r"(?:option\s*)?\(?(\d+)\)?(?:[.):].*)?", cleaned)
    if number and int(number.group(1)) < len(options):
        return int(number.group(1))
    letter = re.fullmatch(r"(?:option\s*)?\(?([a-e])\)?(?:[.):].*)?", cleaned)
    if letter and "abcde".index(letter.group(1)) < len(options):
        return "abcde".index(letter.group(1))
    lowered = [o.strip().lower() for o in options]
    if cleaned in lowered:
        return lowered.index(cleaned)
    contained = [i for i, o in enumerate(lowered) if o and re.search(rf"\b{re.escape(o)}\b", cleaned)]
    if len(contained) == 1:
        return contained[0]
    words = set(re.findall(r"\w+", cleaned))
    overlaps = [len(words & set(re.findall(r"\w+", o))) / max(1, len(set(re.findall(r"\w+", o))))
                for o in lowered]
    best = max(range(len(options)), key=lambda i: overlaps[i])
    return best if overlaps[best] >= 0.6 and overlaps.count(overlaps[best]) == 1 else None


class _Budget(Exception):
    pass


class Planner:
    def __init__(self, tools: list[Tool], ctx: ToolContext, config: PlannerConfig | None = None,
                 on_step: Callable[[Node], None] | None = None):
        self.tools = {t.name: t for t in tools}
        self.ctx = ctx
        self.config = config or PlannerConfig()
        self.on_step = on_step or (lambda node: None)
        self._step_model = self._step_schema(exclude=None)

    def _step_schema(self, exclude: str | None) -> type[BaseModel]:
        actions = tuple(a for a in (*self.tools, ANSWER) if a != exclude)
        # Length caps go into the JSON grammar: small models otherwise ramble until cut off.
        return create_model(
            "Step", thought=(str, Field(max_length=160)), action=(Literal[actions], ...),
            action_input=(str, Field(max_length=240)))

    def solve(self, question: str, options: list[str] | None = None, context: str = "") -> PlanResult:
        started = time.monotonic()
        rng = random.Random(self.config.seed)
        nodes = [Node(id=0, parent=None, depth=0, thought=question)]
        leaves: list[int] = []
        for iteration in range(self.config.n_solutions):
            if self._exhausted(started):
                break
            selected = nodes[0] if iteration == 0 else select_node(nodes, rng, self.config.max_depth)
            leaf = self._expand_and_run(nodes, selected, question, options, context, started)
            for node in path_to(nodes, leaf.id):
                node.visits += 1
            backpropagate(nodes, leaf.id, self.config.alpha if leaf.failure is None
                          else -self.config.alpha, self.config.beta)
            leaves.append(leaf.id)
            if self.config.stop_on_direct_answer and leaf.depth == 1 and leaf.failure is None:
                break
        good = [i for i in leaves if nodes[i].failure is None]
        answer, option, chosen = self._merge(nodes, good, question, options)
        if not good:
            reasons = "; ".join(dict.fromkeys(nodes[i].failure for i in leaves)) or "no time left"
            answer = f"could not answer: {reasons}"
        return PlanResult(answer=answer, option=option, answered=bool(good), nodes=nodes,
                          chosen_leaves=chosen, usage=self.ctx.usage,
                          seconds=time.monotonic() - started)

    def _expand_and_run(self, nodes, selected, question, options, context, started) -> Node:
        avoid = [f"{nodes[c].action}({nodes[c].action_input})" for c in selected.children]
        node = self._step(nodes, selected, question, options, context, avoid, started)
        while not node.is_leaf:
            if node.depth >= self.config.max_depth:
                node.failure = f"no answer within {self.config.max_depth} steps"
                break
            node = self._step(nodes, node, question, options, context, [], started)
        return node

    def _step(self, nodes, parent, question, options, context, avoid, started) -> Node:
        node = Node(id=len(nodes), parent=parent.id, depth=parent.depth + 1)
        nodes.append(node)
        parent.children.append(node.id)
        path = path_to(nodes, parent.id)[1:]
        history = [{"thought": n.thought, "action": n.action, "action_input": n.action_input,
                    "observation": n.observation} for n in path]
        earlier = {(n.action, n.action_input.lower()) for n in path}

        def ask(avoid: list[str], schema: type[BaseModel]) -> BaseModel:
            if self._exhausted(started):
                raise _Budget()
            messages = prompts.planner_messages({n: t.description for n, t in self.tools.items()},
                                                question, options, history, avoid, context)
            step = self.ctx.complete(messages, response_model=schema).parsed
            step.action_input = step.action_input.strip()
            return step

        try:
            step = ask(avoid, self._step_model)
            if (step.action, step.action_input.lower()) in earlier:
                # Small models often call the tool that has just answered once more; asked
                # again without that tool, they usually answer from the observation they have.
                step = ask(avoid + [f"{step.action}({step.action_input})"],
                           self._step_schema(exclude=step.action))
            elif step.action == ANSWER and not options and (unquoted := unquoted_numbers(
                    step.action_input, "\n".join([question, context, *(n.observation for n in path)]))):
                # Numbers in a free answer must come from the question or an observation.
                step = ask(avoid + [f"Answer({step.action_input}), whose {', '.join(unquoted)} "
                                    "is in no observation"], self._step_model)
        except _Budget:
            node.failure = "LLM call or time budget used up"
            return node
        except LLMError as e:
            node.failure = f"LLM error: {e}"
            return node
        node.thought, node.action, node.action_input = step.thought, step.action, step.action_input
        if (node.action, node.action_input.lower()) in earlier:
            node.failure = f"repeated step: {node.action}({node.action_input})"
        elif node.action == ANSWER:
            self._finish(node, options)
        else:
            self._observe(node, self.tools[node.action].run(node.action_input, self.ctx))
        self.on_step(node)
        return node

    def _finish(self, node: Node, options: list[str] | None) -> None:
        if not node.action_input:
            node.failure = "bad format: empty answer"
        elif options:
            node.option = choose_option(node.action_input, options)
            if node.option is None:
                node.failure = f"bad format: '{node.action_input}' is not one of the options"
            else:
                node.answer = options[node.option]
        else:
            node.answer = node.action_input

    @staticmethod
    def _observe(node: Node, observation: Observation) -> None:
        node.observation = observation.text
        node.times, node.instance_ids = observation.times, observation.instance_ids
        if not observation.ok:
            node.failure = f"tool error: {observation.text}"

    def _merge(self, nodes, good, question, options) -> tuple[str, int | None, list[int]]:
        if not good:
            return "", None, []
        if options:
            votes = Counter(nodes[i].option for i in good)
            top = max(votes.values())
            option = next(nodes[i].option for i in good if votes[nodes[i].option] == top)
            return options[option], option, [i for i in good if nodes[i].option == option]
        answers = list(dict.fromkeys(nodes[i].answer for i in good))
        if len(answers) == 1:
            return answers[0], None, good
        try:
            reply = self.ctx.complete(prompts.merge_messages(question, answers), max_tokens=150)
            return reply.text.strip() or answers[0], None, good
        except LLMError as e:
            log.warning("merging answers failed (%s); keeping the first", e)
            return answers[0], None, good

    def _exhausted(self, started: float) -> bool:
        return (self.ctx.usage.calls >= self.config.max_llm_calls
                or time.monotonic() - started >= self.config.max_seconds)
