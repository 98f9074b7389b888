"""What a replayed entry may save: the typed query behind it, run again on the new question.

A workflow learned from a validated answer keeps the typed query its answer rested on
(operation, target, words, and whether it named a time). When a similar question comes back,
that query runs first with the new question's own time phrase (resolved by code) and words,
with no LLM call: the planner then starts from its observation, or, when its computed value is
exactly one option, the answer needs no LLM call at all.

A checked fact holds for the time, quoted words and instance ids its question named (`Asked`):
it is replayed only to questions that name the same ones. A fact whose answer a typed query
computed is checked by running that query again, and dropped when the tables say otherwise.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from backend.agent import queries, video_tables
from backend.agent.planner import GivenStep
from backend.agent.timephrases import resolve
from backend.agent.tools import observed, parse_instance_ids
from backend.memory_records import MemoryEntry

log = logging.getLogger(__name__)

_QUOTED = re.compile(r"(?<!\w)[\"'“‘]([^\"'”’]{1,60})[\"'”’](?!\w)")
_SAME_TIME = 0.01  # seconds: spans resolved from the same phrase agree to the hundredth


@dataclass(frozen=True)
class Asked:
    """What a question pins down besides its need: the time it names (resolved against the
    video's duration), the words it quotes and the instance ids it names."""

    span: tuple[float, float] | None = None
    words: tuple[str, ...] = ()
    ids: tuple[int, ...] = ()

    def to_json(self) -> str:
        return json.dumps({"span": list(self.span) if self.span else None,
                           "words": list(self.words), "ids": list(self.ids)})

    @classmethod
    def from_json(cls, text: str) -> "Asked | None":
        """None for an empty text: a fact stored before questions' times were kept."""
        if not text:
            return None
        data = json.loads(text)
        span = data.get("span")
        return cls(tuple(span) if span else None, tuple(data.get("words") or ()),
                   tuple(data.get("ids") or ()))

    def same(self, other: "Asked") -> bool:
        if (self.span is None) != (other.span is None):
            return False
        if self.span and any(abs(a - b) > _SAME_TIME for a, b in zip(self.span, other.span)):
            return False
        return ({w.lower() for w in self.words} == {w.lower() for w in other.words}
                and set(self.ids) == set(other.ids))


def asked_of(question: str, duration: float) -> Asked:
    span = resolve(question, duration)
    return Asked(span=(span.start, span.end) if span else None,
                 words=tuple(_QUOTED.findall(question)), ids=tuple(parse_instance_ids(question)))


def fact_asked(fact: MemoryEntry, duration: float) -> Asked:
    """What a stored fact's question asked; for facts stored before it was kept, read again
    from their question."""
    return Asked.from_json(fact.asked or "") or asked_of(fact.question or "", duration)


def rerun(step: dict, question: str,
          tables: video_tables.VideoTables) -> tuple[video_tables.Result, queries.TypedQuery] | None:
    """A stored typed query (operation, target, words, timed) run on this question, with no
    LLM call; None
    when it does not fit the question: a time where it had none or the reverse, another kind of
    object, words the question does not give, or nothing found."""
    if step["timed"] != (resolve(question, tables.duration) is not None):
        return None
    target = step.get("target", "") if step["operation"] in queries.UNTARGETED else \
        _target_for(step.get("target", ""), question, tables)
    words = _words_for(step.get("words", ""), question)
    if target is None or words is None:
        return None
    # time and until stay empty: the question's own time phrase is the one resolved.
    query = queries.TypedQuery(operation=step["operation"], target=target, time="", until="",
                               words=words)
    result = queries.run(query, question, tables)
    return None if result.support == "none" else (result, query)


def _target_for(target: str, question: str, tables: video_tables.VideoTables) -> str | None:
    """The stored target, when this question asks about the same kind of object; an instance id
    is replaced by the one this question names."""
    said = video_tables.parse_target(target)
    ids = parse_instance_ids(question)
    if said.instance is not None:
        return f"#{ids[0]}" if len(ids) == 1 else None
    if ids:
        return None
    known = set(tables.categories) | {"person"}
    named = {t.category for w in re.findall(r"[a-z]+", question.lower())
             if (t := video_tables.parse_target(w)).category in known}
    return target if named == ({said.category} if said.category else set()) else None


def _words_for(words: str, question: str) -> str | None:
    """The stored words when this question says them too, else the one phrase it quotes."""
    if not words.strip():
        return ""
    said = set(re.findall(r"[\w']+", question.lower()))
    if set(re.findall(r"[\w']+", words.lower())) <= said:
        return words
    quoted = _QUOTED.findall(question)
    return quoted[0] if len(quoted) == 1 else None


def deciding_query(workflow: list[dict]) -> dict | None:
    """The typed query of a workflow's last step that ran one: the step its answer rested on."""
    return next(({**s["query"], "tool": s["tool"]} for s in reversed(workflow) if s.get("query")),
                None)


@dataclass
class Replayed:
    """The first step replayed memory gives the planner, and the facts the tables contradict."""

    given: GivenStep | None
    contradicted: list[str]


def first_step(facts: list[MemoryEntry], plans: list[MemoryEntry], question: str,
               tables: video_tables.VideoTables) -> Replayed:
    """Check the replayed facts that a typed query computed (same time: the recall kept only
    those), then try the workflows' typed queries, most similar first. The first that fits is
    run as the first step."""
    contradicted, given = [], None
    for fact in facts:
        stored = json.loads(fact.query or "{}")
        if not stored:
            continue  # the model's reading: nothing to check it with
        ran = rerun(stored, question, tables)
        if ran is None or (ran[0].support == "computed" and ran[0].value != stored["value"]):
            log.info("replayed fact %s dropped: the tables give %r, not %r", fact.id,
                     ran and ran[0].value, stored["value"])
            contradicted.append(fact.id)
        elif given is None:
            given = _given(*ran, stored["tool"], question, fact, "a checked fact")
    for plan in plans:
        if given is not None:
            break
        stored = deciding_query(plan.workflow or [])
        if stored and (ran := rerun(stored, question, tables)):
            given = _given(*ran, stored["tool"], question, plan, "a workflow")
    return Replayed(given, contradicted)


def _given(result: video_tables.Result, query: queries.TypedQuery, tool: str, question: str,
           entry: MemoryEntry, what: str) -> GivenStep:
    return GivenStep(tool=tool, tool_input=question,
                     thought=f"replayed the typed query of {what} ({entry.id}) learned from "
                             f"\"{entry.question}\", with this question's time and words",
                     observation=observed(result, query),
                     replayed=entry.ref)
