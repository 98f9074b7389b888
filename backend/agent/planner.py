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
The tree, its selection, back-propagation and vote are in `search_tree`; how far an answer is
trusted, in `confidence`; whether a free answer to an open question is taken, in `free_answers`.
The public DoraemonGPT code rewarded failures positively and never merged its answers.

Grounded answers (on unless `PlannerConfig.grounded` is off, for the old agent side by side):
- with options, the Answer step's JSON grammar allows only an option's text, so a multiple-choice
  answer cannot fail on format;
- a tool's computed value that equals exactly one option (after number words and case) answers
  by code, without an LLM call; a computed number that no option states goes, by code, to the
  nearest option (same unit), flagged low; an open question about something ingest cannot
  observe is answered by code with the reason;
- early stop: once a solution's answer rests on a computed value, the other N - 1 iterations
  are skipped (as they are when a replayed fact answers at once), and with options once the
  iterations left could not change the vote;
- each answer carries a confidence: the agreement of the N leaves and the basis of the chosen
  option itself, never of another step's (computed, nearest, derived, read, memory, proxy,
  none, unobserved): only an option that states a computed value can be high.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Callable, Literal

from pydantic import BaseModel, Field, RootModel, create_model

from backend.agent import free_answers, meaning, option_match, precision, prompts
from backend.agent.confidence import basis, confidence
from backend.agent.digest import refused as digest_check
from backend.agent.options import (choose_option, nearest_option, nearest_options,
                                   option_for_value, option_labels)
from backend.agent.search_tree import (ANSWER, Node, backpropagate, path_to, select_node,
                                       vote)
from backend.agent.tools import Observation, Tool, ToolContext
from backend.answer import Confidence
from backend.memory_records import EntryRef
from models.llm import LLMError, Usage

log = logging.getLogger(__name__)

# The step that writes down a video's evidence for an open question (`digest`), told by the model.
DIGEST = "Digest"
# The distilled model's answer where a live checked fact says the same (`memory.parametric`).
PARAMETRIC = "Parametric"


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
    grounded: bool = True      # option grammar, answers from computed values, early stop
    # Whether the measurement behind a computed answer (its typed query, with conditions) is
    # precise enough, as measured on external truth, to be called high.
    trusted: Callable[[dict], bool] = precision.earns_high
    # Tools whose computed value answers an open question as it stands (the library's list of
    # videos), so code gives it rather than a model retelling it, names and times included.
    answered_by: tuple[str, ...] = ()


@dataclass
class PlanResult:
    answer: str
    option: int | None
    answered: bool
    nodes: list[Node]
    chosen_leaves: list[int]
    usage: Usage
    seconds: float
    confidence: Confidence

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

    @property
    def decided_by(self) -> EntryRef | None:
        """The replayed memory entry whose step the chosen answer rests on."""
        if not self.chosen_leaves:
            return None
        observed = [n for n in self.path(self.chosen_leaves[0])
                    if n.action and n.action != ANSWER and n.failure is None]
        return observed[-1].replayed if observed else None


@dataclass
class GivenStep:
    """A step taken before planning, with no LLM call: a replayed workflow's typed query, or
    the one the question's own words call for (`routing`), run on this question. It becomes the
    first step of the first solution."""

    tool: str
    tool_input: str
    thought: str
    observation: Observation
    replayed: EntryRef | None   # the memory entry it came from; None when the question chose it


class _Budget(Exception):
    pass


def _excluded(exclude: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """The actions a step may not take, given as one name, several or none."""
    return (exclude,) if isinstance(exclude, str) else exclude or ()


# Supports after which another MCTS path cannot do better: the value is computed (whether an
# option states it, code took the nearest option, or the model read an option from it), cannot
# be observed at all, or only a stand-in for it was observed, which every path would read alike.
_FINAL = ("computed", "nearest", "derived", "unobserved", "proxy", "contradicted", "unsupported")
# Supports after which only an answer is asked for: no tool can do better.
_ONLY_ANSWER = ("unobserved", "proxy", "unsupported")


@dataclass
class _Question:
    """One question being solved: what every step needs, and the tree grown for it so far."""

    text: str
    options: list[str] | None
    context: str
    given: GivenStep | None = None  # the first solution's first step; used once, then cleared
    given_node: int | None = None  # the node that step became
    guide: Callable[[], str] = lambda: ""  # how to use the tools: for steps that may call one
    started: float = field(default_factory=time.monotonic)
    nodes: list[Node] = field(init=False)
    leaves: list[int] = field(default_factory=list)  # one per solution tried, in order

    def __post_init__(self) -> None:
        self.nodes = [Node(id=0, parent=None, depth=0, thought=self.text)]

    def grow(self, parent: Node, **fields) -> Node:
        """A new child of `parent`, added to the tree."""
        node = Node(id=len(self.nodes), parent=parent.id, depth=parent.depth + 1, **fields)
        self.nodes.append(node)
        parent.children.append(node.id)
        return node

    def answered(self) -> list[int]:
        """The leaves tried that are answers, not failures."""
        return [i for i in self.leaves if self.nodes[i].failure is None]


class Planner:
    def __init__(self, tools: list[Tool], ctx: ToolContext, config: PlannerConfig | None = None,
                 on_step: Callable[[Node], None] | None = None):
        self.tools = {t.name: t for t in tools}
        self.ctx = ctx
        self.config = config or PlannerConfig()
        self.on_step = on_step or (lambda node: None)

    def _step_schema(self, options: list[str] | None,
                     exclude: str | tuple[str, ...] | None = None,
                     allowed: list[int] | None = None) -> type[BaseModel]:
        """allowed: the options an answer may pick (all when None)."""
        excluded = _excluded(exclude)
        tools = tuple(a for a in self.tools if a not in excluded)
        # Length caps go into the JSON grammar: small models otherwise ramble until cut off.
        thought = (str, Field(max_length=120))
        tool_input = (str, Field(max_length=240))
        if not options or not self.config.grounded:
            actions = tuple(a for a in (*tools, ANSWER) if a not in excluded)
            return create_model("Step", thought=thought, action=(Literal[actions], ...),
                                action_input=tool_input)
        labels = option_labels(options)
        answer = create_model("AnswerStep", thought=thought, action=(Literal[ANSWER], ...),
                              action_input=(Literal[tuple(labels[i] for i in allowed or
                                                          range(len(labels)))], ...))
        if not tools:
            return answer
        use_tool = create_model("ToolStep", thought=thought, action=(Literal[tools], ...),
                                action_input=tool_input)
        return RootModel[use_tool | answer]  # type: ignore[valid-type]

    def solve(self, question: str, options: list[str] | None = None, context: str = "",
              given: GivenStep | None = None,
              guide: Callable[[], str] | None = None) -> PlanResult:
        """given: a first step already taken (saves the first solution its first LLM call);
        guide: text on which tools to call (memory's decision pattern), asked for only by a
        step that may still call one, so an answer that needs none never pays for it."""
        q = _Question(question, options, context, given, guide=guide or (lambda: ""))
        rng = random.Random(self.config.seed)
        for iteration in range(self.config.n_solutions):
            if self._exhausted(q):
                break
            selected = q.nodes[0] if iteration == 0 else select_node(q.nodes, rng,
                                                                     self.config.max_depth)
            leaf = self._expand_and_run(q, selected)
            for node in path_to(q.nodes, leaf.id):
                node.visits += 1
            backpropagate(q.nodes, leaf.id, self.config.alpha if leaf.failure is None
                          else -self.config.alpha, self.config.beta)
            q.leaves.append(leaf.id)
            if self._settled(leaf) or q.nodes[leaf.parent or 0].action in (DIGEST, PARAMETRIC) \
                    or self._vote_decided(q, self.config.n_solutions - iteration - 1) \
                    or (not q.options and leaf.failure is None and leaf.parent == q.given_node):
                # another path cannot do better than a computed value, see the unseeable, tell
                # a digest of the same tables better, beat two memories that agree, or change
                # the vote; nor can it read more than the typed query the question named, run
                # with the question itself: on the shared clips a second path called that
                # query again (or one that ran it) and told the same answer, at 4 to 8 calls
                break
        return self._result(q)

    def _vote_decided(self, q: _Question, left: int) -> bool:
        """With options, whether the `left` solutions still to try cannot change the vote
        (`search_tree.vote`: most votes, a tie to the option answered first) even if all of
        them answered one other option: with N = 2 an answered first solution is the answer
        whatever the second says, so its calls would only be waited for."""
        picked = [q.nodes[i].option for i in q.answered()]
        if not (self.config.grounded and q.options and picked):
            return False
        votes, lead = vote(picked)
        # a new option would be answered after the leader, so it must pass it to win
        if left > votes[lead]:
            return False
        return all(votes[o] + left < votes[lead] or
                   (votes[o] + left == votes[lead] and picked.index(lead) < picked.index(o))
                   for o in votes if o != lead)

    def _settled(self, leaf: Node) -> bool:
        return leaf.failure is None and (
            (self.config.stop_on_direct_answer and leaf.depth == 1)
            or (self.config.grounded and leaf.support in _FINAL))

    def _result(self, q: _Question) -> PlanResult:
        good = q.answered() or self._fallback(q)
        answer, option, chosen = self._merge(q, good)
        if not good:
            failures = dict.fromkeys(q.nodes[i].failure for i in q.leaves)
            reasons = "; ".join(failures) or "no time left"
            answer = f"could not answer: {reasons}"
        return PlanResult(answer=answer, option=option, answered=bool(good), nodes=q.nodes,
                          chosen_leaves=chosen, usage=self.ctx.usage,
                          seconds=time.monotonic() - q.started,
                          confidence=confidence(q.nodes, good, chosen, len(q.leaves),
                                                self.config.trusted))

    def _fallback(self, q: _Question) -> list[int]:
        """Where every path failed on the video's tools (a tool error, a repeated step) and a
        call is left, a multiple-choice question still gets the model's pick from what the
        search saw, flagged low: an answer beats none (a rowing clip's search ended on the
        graph's "holds nothing the input names" twice, after 98 s, with no answer at all)."""
        if not (self.config.grounded and q.options) or self._exhausted(q) or \
                all(q.nodes[i].failure.startswith("LLM error") for i in q.leaves):
            return []  # a model that cannot be reached or read is not asked once more
        seen = [n for n in q.nodes[1:] if n.action and n.action != ANSWER and not n.failure]
        parent = max(seen, key=lambda n: n.depth, default=q.nodes[0])
        node = self._step(q, parent, [], answer_only=True)
        if node.option is not None and not node.failure:
            node.support = "fallback"
            q.leaves.append(node.id)
        return q.answered()

    def _expand_and_run(self, q: _Question, selected: Node) -> Node:
        if q.given:
            node = self._add_given(q, selected)
        else:
            avoid = [f"{q.nodes[c].action}({q.nodes[c].action_input})" for c in selected.children]
            node = self._step(q, selected, avoid)
        while not node.is_leaf:
            if node.depth >= self.config.max_depth:
                node.failure = f"no answer within {self.config.max_depth} steps"
                break
            node = self._computed_answer(q, node) or self._step(q, node, [])
        return node

    def _computed_answer(self, q: _Question, parent: Node) -> Node | None:
        """An answer code can give from the last observation, without an LLM call: the option
        that equals a computed value, or, for an open question, why it cannot be observed."""
        if not self.config.grounded:
            return None
        if parent.action == PARAMETRIC:
            i = option_for_value(parent.value, q.options) if q.options else None
            if q.options and i is None:
                return None  # the fact answered other options: the planner reads it
            return self._add_answer(q, parent, "the distilled model and a live checked fact "
                                    "agree", q.options[i] if q.options else parent.value, i,
                                    "memory")
        if q.options and parent.support == "computed" and \
                (i := option_for_value(parent.value, q.options)) is not None:
            thought = f"the computed value '{parent.value}' is option {i}"
            if parent.replayed:
                thought += f" (a replayed {parent.replayed.kind} memory decided it)"
            return self._add_answer(q, parent, thought, q.options[i], i, "computed")
        if q.options and parent.support in ("computed", "read", "unsupported") and \
                (decision := option_match.decide(parent.typed, q.options)) and \
                decision.chosen is not None:
            i = decision.chosen
            return self._add_answer(q, parent, decision.explanation, q.options[i], i,
                                    decision.basis, decision.rests_on)
        if q.options and parent.support == "computed" and \
                (i := meaning.option_meaning(parent.value, q.options)) is not None:
            thought = (f"the computed value '{parent.value}' is option {i}, '{q.options[i]}': "
                       f"the same value written another way")
            return self._add_answer(q, parent, thought, q.options[i], i, "computed")
        if q.options and parent.support == "computed" and \
                (i := nearest_option(parent.value, q.options)) is not None:
            # A measurement off by a little: its nearest option, flagged, never read as exact.
            thought = (f"the computed value '{parent.value}' is none of the options; the nearest "
                       f"is option {i}, '{q.options[i]}'")
            return self._add_answer(q, parent, thought, q.options[i], i, "nearest")
        if not q.options and parent.action == DIGEST:
            return self._tell(q, parent)
        if not q.options and parent.support == "computed" and parent.value in ("yes", "no") and \
                (said := parent.observation.splitlines()[0]).startswith(
                    f"{parent.value.capitalize()}: "):
            # A tool that answers a yes-or-no question itself states it on its first line, with
            # what it rests on ("Yes: #3 sitting 10.2-15.0 s."): that line is the answer.
            return self._add_answer(q, parent, "the tool answered yes or no", said, None,
                                    "computed")
        if not q.options and parent.support == "computed" and (said := parent.typed.get("said")):
            # A tool that states the answer to an open question whole (a relation's list of
            # who was on that side, the tally of the ways asked about): code's sentence, which
            # a retelling can turn round.
            return self._add_answer(q, parent, "the tool stated the answer", said, None,
                                    "computed")
        if not q.options and parent.support == "computed" and parent.value and \
                parent.action in self.config.answered_by:
            return self._add_answer(q, parent, f"{parent.action} computed the answer", parent.value,
                                    None, "computed")
        if not q.options and parent.support == "unobserved":
            # The reason is the first line; what the tool listed after it is in the evidence.
            reason = parent.observation.partition("\n")[0]
            return self._add_answer(q, parent, "the tables cannot hold this",
                                    f"I cannot tell from this video's memory. {reason}", None,
                                    "unobserved")
        return None

    def _tell(self, q: _Question, parent: Node) -> Node:
        """The digest in sentences, one LLM call; code's own account of it (the step's value,
        `digest.account`) where the model's is refused (`digest.refused`) or cannot be had."""
        if said := parent.typed.get("said"):
            return self._add_answer(q, parent, "code's account of what people do is the answer",
                                    said, None, "computed")
        lines = parent.observation.splitlines()
        why = "no LLM call or time left"
        if not self._exhausted(q):
            try:
                told = self.ctx.complete(prompts.digest_messages(q.text, lines),
                                         max_tokens=160).text.strip()
                if (why := digest_check(told, q.text, lines)) is None:
                    return self._add_answer(q, parent, "the digest, told in sentences", told,
                                            None, "read")
            except LLMError as e:
                why = f"the LLM failed: {e}"
        return self._add_answer(q, parent, f"the model's account was not used ({why}): code's "
                                "account of the digest is the answer",
                                parent.value or parent.observation, None, "computed")

    def _add_given(self, q: _Question, parent: Node) -> Node:
        given, q.given = q.given, None
        node = q.grow(parent, thought=given.thought, action=given.tool,
                      action_input=given.tool_input, replayed=given.replayed)
        q.given_node = node.id
        self._observe(node, given.observation)
        self.on_step(node)
        return node

    def _add_answer(self, q: _Question, parent: Node, thought: str, answer: str,
                    option: int | None, basis: str, rests_on: Sequence[str] = ()) -> Node:
        node = q.grow(parent, thought=thought, action=ANSWER, action_input=answer, answer=answer,
                      option=option, support=basis, rests_on=list(rests_on))
        self.on_step(node)
        return node

    def _step(self, q: _Question, parent: Node, avoid: list[str],
              answer_only: bool = False) -> Node:
        node = q.grow(parent)
        path = path_to(q.nodes, parent.id)[1:]
        history = [{"thought": n.thought, "action": n.action, "action_input": n.action_input,
                    "observation": n.observation} for n in path]
        earlier = {(n.action, n.action_input.lower()) for n in path}

        halfway, narrowed, contradicted = self._narrowed(q, parent)

        def ask(avoid: list[str], exclude: str | tuple[str, ...] | None = None):
            if self._exhausted(q):
                raise _Budget()
            if narrowed:
                exclude = tuple(self.tools)
            context = q.context
            if any(t not in _excluded(exclude) for t in self.tools):
                context = "\n\n".join(c for c in (context, q.guide()) if c)
            messages = prompts.planner_messages({n: t.description for n, t in self.tools.items()},
                                                q.text, q.options, history, avoid, context)
            schema = self._step_schema(q.options, exclude, allowed=narrowed)
            step = self.ctx.complete(messages, response_model=schema).parsed
            step = getattr(step, "root", step)
            step.action_input = step.action_input.strip()
            return step

        # Once ingest is known not to observe what the question needs (or offers only a
        # stand-in for it), no tool can do better: a multiple-choice question goes straight to
        # its (flagged) best guess. So it does when one call is left: an answer beats none.
        last_call = self.config.max_llm_calls - self.ctx.usage.calls <= 1
        only_answer = self.config.grounded and (
            (q.options and (parent.support in _ONLY_ANSWER or last_call or contradicted
                            or answer_only))
            # an open question that no tool can add to: one reading of what was found
            or (not q.options and parent.support == "unsupported"))
        try:
            step = ask(avoid, exclude=tuple(self.tools) if only_answer else None)
            if (step.action, step.action_input.lower()) in earlier:
                # Small models often call the tool that has just answered once more; asked
                # again without that tool, they usually answer from the observation they have.
                step = ask(avoid + [f"{step.action}({step.action_input})"], exclude=step.action)
                if (step.action, step.action_input.lower()) in earlier and self.config.grounded:
                    # Going round in circles (one tool, then another, then the first again): an
                    # answer from what is on the path beats none, open or multiple choice.
                    step = ask(avoid, exclude=tuple(self.tools))
            if step.action == ANSWER and not q.options and \
                    (why := free_answers.refused(step.action_input, q.text, q.context, parent, path)):
                # Asked once more, for an answer only, with the reason (free to call a tool, the
                # model called the one that had answered again); where that answer is refused
                # too, code's value is the answer, or the words it rests on quoted.
                step = ask(avoid + [f"Answer({step.action_input}), {why}"],
                           exclude=tuple(self.tools))
                if step.action == ANSWER and free_answers.refused(step.action_input, q.text,
                                                                  q.context, parent, path):
                    step.action_input = free_answers.said_by_code(parent) or step.action_input
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
            self._finish(q, node, path)
            if halfway and node.option in halfway:
                node.support = "nearest"  # one of the nearest options, flagged like the one
            elif narrowed and node.option in narrowed and node.support in ("computed", "read"):
                node.support = "derived"  # the model's choice among what the evidence allows
            elif contradicted:
                node.support = "contradicted"  # typed evidence fits no option: a guess
        else:
            self._observe(node, self.tools[node.action].run(node.action_input, self.ctx))
        self.on_step(node)
        return node

    def _narrowed(self, q: _Question, parent: Node) -> tuple[list[int] | None, list[int] | None,
                                                              bool]:
        """(halfway, narrowed, contradicted): the options the model may choose among after this
        observation, when code ruled the others out. halfway: a computed number lies halfway
        between two options (a small model otherwise "matched" a far option); narrowed: those,
        or the options the typed evidence supports equally (`option_match`), None for any;
        contradicted: the typed evidence fits no option, so no tool on these tables will do
        better and the model's pick is a flagged guess."""
        if not (self.config.grounded and q.options and parent.support in ("computed", "read")):
            return None, None, False
        halfway = nearest_options(parent.value, q.options) if parent.support == "computed" else []
        if len(halfway) > 1:
            return halfway, halfway, False
        decision = option_match.decide(parent.typed, q.options)
        if decision is None:
            return None, None, False
        if decision.explanation not in parent.observation:
            parent.observation += f"\nThe options against this evidence: {decision.explanation}"
        if 1 < len(decision.supported) < len(q.options):
            return None, sorted(decision.supported), False
        return None, None, not decision.supported

    def _finish(self, q: _Question, node: Node, path: list[Node]) -> None:
        node.support = basis(path)
        if node.support == "computed" and q.options:
            # No option states the computed value (else code had answered): the option is the
            # model's reading of it, and the basis is that option's, not the value's.
            node.support = "derived"
        if node.support == "none" and self.config.stop_on_direct_answer:
            node.support = "memory"  # answered from the replayed facts in its prompt
        if not node.action_input:
            node.failure = "bad format: empty answer"
        elif q.options:
            if self.config.grounded:
                node.option = option_labels(q.options).index(node.action_input)
            else:
                node.option = choose_option(node.action_input, q.options)
            if node.option is None:
                node.failure = f"bad format: '{node.action_input}' is not one of the options"
            else:
                node.answer = q.options[node.option]
        else:
            node.answer = node.action_input

    @staticmethod
    def _observe(node: Node, observation: Observation) -> None:
        node.observation = observation.text
        node.times, node.instance_ids = observation.times, observation.instance_ids
        node.sql, node.value, node.support = observation.sql, observation.value, observation.support
        node.query, node.typed = observation.query, observation.typed
        if not observation.ok:
            node.failure = f"tool error: {observation.text}"

    def _merge(self, q: _Question, good: list[int]) -> tuple[str, int | None, list[int]]:
        if not good:
            return "", None, []
        nodes = q.nodes
        if q.options:
            _, option = vote([nodes[i].option for i in good])
            return q.options[option], option, [i for i in good if nodes[i].option == option]
        answers = list(dict.fromkeys(nodes[i].answer for i in good))
        if len(answers) == 1:
            return answers[0], None, good
        try:
            reply = self.ctx.complete(prompts.merge_messages(q.text, answers), max_tokens=150)
            return reply.text.strip() or answers[0], None, good
        except LLMError as e:
            log.warning("merging answers failed (%s); keeping the first", e)
            return answers[0], None, good

    def _exhausted(self, q: _Question) -> bool:
        return (self.ctx.usage.calls >= self.config.max_llm_calls
                or time.monotonic() - q.started >= self.config.max_seconds)
