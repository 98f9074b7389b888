"""The tools the planner can call. Each takes a short text input and returns an Observation.

- Sub-task tools (When, Why, What, How, Count, Other): LLM sub-agents over the video's tables
  (DoraemonGPT section 2.1). Each first fills a typed query (backend/agent/queries.py) whose
  value code computes and states; when no operation fits, it writes SQL, runs it through the
  read-only runner, retries once on an SQL error, and answers from the rows.
- Recall: iterative search of the video's memories (episodic at any scale, checked facts,
  tables) until enough is found.
- Knowledge tools (plug-ins, DoraemonGPT section 2.2): `DocumentTool` searches a text document
  the user attached, by embeddings.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field, create_model

from backend import episodic
from backend.agent import prompts, queries, video_tables
from backend.errors import QueryError
from backend.memory_records import MemoryEntry
from backend.sql_runner import run_query
from models.llm import ChatModel, LLMError, Reply, Usage

log = logging.getLogger(__name__)

_TIME_COLUMNS = ("t", "t_start", "t_end", "first_seen", "last_seen")
_ROWS_IN_PROMPT = 30
_ROWS_IN_OBSERVATION = 8


@dataclass
class Observation:
    """What a tool returns: text for the LLM, evidence for the interface, ok=False on failure."""

    text: str
    ok: bool = True
    times: list[float] = field(default_factory=list)
    instance_ids: list[int] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    sql: str = ""
    value: str = ""                        # the computed answer to the tool's input, if any
    support: video_tables.Support = "read"      # computed by code, read by a model, nothing, unobservable
    # The typed query that code ran (its fields and resolved span), so memory can run it again.
    query: dict = field(default_factory=dict)
    typed: dict = field(default_factory=dict)   # typed evidence (`option_match`)


@dataclass
class ToolContext:
    """What every tool may use for one question: the video, the LLM, limits, usage so far."""

    video_id: str
    db_path: Path
    memory_folder: Path
    llm: ChatModel
    embed: Callable[[list[str]], np.ndarray]  # texts -> unit vectors
    usage: Usage
    sql_timeout_s: float = 2.0
    sql_max_rows: int = 200
    typed_queries: bool = True   # False: sub-agents write SQL from scratch (the old agent)

    def tables(self) -> video_tables.VideoTables:
        return video_tables.VideoTables(self.db_path, self.sql_timeout_s, self.sql_max_rows)

    def complete(self, messages: list[dict], response_model: type[BaseModel] | None = None,
                 max_tokens: int = 200) -> Reply:
        """One LLM call, counted in this question's usage whether or not it succeeds."""
        started = time.perf_counter()
        try:
            reply = self.llm.complete(messages, response_model=response_model, max_tokens=max_tokens)
        except LLMError:
            # A failed call counts against MAX_LLM_CALLS too: otherwise a dead or broken
            # endpoint is asked again for every MCTS iteration, with no bound but N.
            self.usage.add(Usage(calls=1, seconds=time.perf_counter() - started))
            raise
        self.usage.add(reply.usage)
        return reply


def observed(result: video_tables.Result, query: queries.TypedQuery | None = None) -> Observation:
    """A typed query's result as an observation; `query` when it is the query that ran."""
    span = result.span
    ran = {**query.model_dump(), "span": [span.start, span.end] if span else None,
           "conditions": result.conditions} if query else {}
    return Observation(text=result.text, times=sorted(set(result.times or [])),
                       instance_ids=result.instance_ids or [], rows=(result.rows or [])[:_ROWS_IN_PROMPT],
                       sql=result.sql, value=result.value, support=result.support, query=ran,
                       typed=result.typed or {})


class Tool(Protocol):
    name: str
    description: str

    def run(self, tool_input: str, ctx: ToolContext) -> Observation: ...


def parse_instance_ids(text: str) -> list[int]:
    """Instance ids named in text ('#12', 'person 6', 'ids 3, 12'): whole numbers, in order.

    The public DoraemonGPT code iterated over the characters of an id string, so '12' became
    ids 1 and 2; here ids are always read as whole numbers.
    """
    ids = []
    for match in re.finditer(r"(?:#|\b(?:instances?|ids?|persons?|people|objects?)\s+)((?:\d+\s*(?:,|and)?\s*)+)", text, re.I):
        ids += [int(n) for n in re.findall(r"\d+", match.group(1))]
    return list(dict.fromkeys(ids))


def evidence_from_rows(rows: list[dict], sql: str = "") -> tuple[list[float], list[int]]:
    """Times and instance ids found in result rows, by column name.

    `id` is an instance id only in a query over the instances table alone.
    """
    times, ids = [], []
    id_is_instance = bool(re.search(r"\bFROM\s+instances\b", sql, re.I)) and " join " not in sql.lower()
    for row in rows:
        for column, value in row.items():
            name = column.lower()
            if name in _TIME_COLUMNS and isinstance(value, (int, float)):
                times.append(round(float(value), 2))
            elif (name == "instance_id" or (id_is_instance and name == "id")) and isinstance(value, int):
                ids.append(value)
            elif name == "instance_ids" and isinstance(value, str) and value.startswith("["):
                ids += [int(v) for v in json.loads(value)]
    return sorted(set(times)), list(dict.fromkeys(ids))


_KNOWN_VALUES = {"person"}


def guessed_literals(sql: str, question: str) -> list[str]:
    """String literals the query filters on that the question never mentions.

    Small models like to add `word LIKE 'welcome'` to 'which word is said?': a guess that
    returns nothing. Values from the schema's vocabulary (categories) are fine.
    """
    asked = question.lower()
    guessed = []
    for literal in string_literals(sql):
        core = literal.replace("''", "'").strip("%_ ").lower()
        # Whole words only: `LIKE 's%'` is a guess even though "speaker" starts with s.
        mentioned = re.search(rf"(?<!\w){re.escape(core)}(?!\w)", asked)
        if core and not mentioned and core not in _KNOWN_VALUES:
            guessed.append(literal)
    return guessed


def drop_conditions(sql: str, literals: list[str]) -> str:
    """The query without its `column LIKE/= 'literal'` conditions, where they can be cut cleanly.

    A 1.5B model asked to remove a filter often writes the same query again; cutting it here
    costs no LLM call. Conditions inside OR or a subquery are left alone.
    """
    for literal in literals:
        condition = rf"[\w.]+\s+(?:NOT\s+)?(?:LIKE|=|GLOB)\s+'{re.escape(literal)}'"
        for pattern in (rf"\s+AND\s+{condition}", rf"{condition}\s+AND\s+",
                        rf"\s+WHERE\s+{condition}(?=\s+(?:GROUP|ORDER|LIMIT)\b|\s*;?\s*$)"):
            cut = re.sub(pattern, "", sql, count=1, flags=re.IGNORECASE)
            if cut != sql:
                sql = cut
                break
    return sql


def string_literals(sql: str) -> list[str]:
    return re.findall(r"'((?:[^']|'')*)'", sql)


def unquoted_numbers(answer: str, sources: str) -> list[str]:
    """Numbers of two or more digits in an answer that appear nowhere in what it rests on.

    A 1.5B model turns an overlay's "17/09/07120419" into "2007-09-07" or "07/12/2017": a
    number nothing holds is a reformat or a guess.
    """
    return [n for n in dict.fromkeys(re.findall(r"\d{2,}", answer)) if n not in sources]


def _cell(value) -> str:
    """A value as the LLM sees it in a table of rows."""
    return "" if value is None else (f"{value:.2f}" if isinstance(value, float) else str(value))


def format_rows(columns: list[str], rows: list[tuple], truncated: bool) -> str:
    if not rows:
        return "(no rows)"
    lines = [" | ".join(columns)]
    lines += [" | ".join(_cell(v) for v in row) for row in rows[:_ROWS_IN_PROMPT]]
    if truncated or len(rows) > _ROWS_IN_PROMPT:
        lines.append(f"... ({len(rows)}+ rows, first {_ROWS_IN_PROMPT} shown)")
    return "\n".join(lines)


class SqlQuery(BaseModel):
    sql: str = Field(description="one SQLite SELECT statement over the tables above", max_length=600)


class SubAnswer(BaseModel):
    answer: str = Field(description="a short answer to the sub-question, from the rows",
                        max_length=300)


def _quote_schema(rows: list[tuple]) -> type[BaseModel] | None:
    """A reply that can only be one of the cells the LLM was shown, written as it saw them;
    None when every cell is empty (there is nothing to quote)."""
    values = tuple(dict.fromkeys(c for row in rows[:_ROWS_IN_PROMPT] for v in row if (c := _cell(v))))
    return create_model("Quote", value=(Literal[values], ...)) if values else None


@dataclass
class SqlSubTaskTool:
    """An LLM sub-agent that answers one kind of sub-question with SQL over the video's tables."""

    name: str
    description: str
    examples: list[tuple[str, str]]

    def run(self, tool_input: str, ctx: ToolContext) -> Observation:
        if not ctx.typed_queries:
            return self.write_sql(tool_input, ctx)
        try:
            query = ctx.complete(prompts.typed_query_messages(self.name, tool_input),
                                 response_model=queries.TypedQuery, max_tokens=90).parsed
        except LLMError as e:
            return Observation(text=f"LLM error: {e}", ok=False)
        if query.operation == "sql":
            written = self.write_sql(tool_input, ctx, read_rows=False)
            if written.ok:
                return written
            # Rather than end the chain on a query the model could not write, give it the
            # descriptions to read.
            query = queries.TypedQuery(operation="timeline", target="", time="", until="", words="")
            result = queries.run(query, tool_input, ctx.tables())
            result.text = f"{written.text}\nThe descriptions instead:\n{result.text}"
        else:
            result = queries.run(query, tool_input, ctx.tables())
            return observed(result, query)
        return observed(result)

    def write_sql(self, tool_input: str, ctx: ToolContext, read_rows: bool = True) -> Observation:
        """DoraemonGPT's sub-agent: SQL written by the LLM, rows read back by the LLM.

        read_rows=False: the rows are the observation, for the planner to read, with no second
        call to paraphrase them (the grounded agent's fallback)."""
        messages = prompts.sql_messages(self.name, self.description, self.examples, tool_input)
        try:
            query = self._ask(ctx, messages, SqlQuery)
            query.sql = drop_conditions(query.sql, guessed_literals(query.sql, tool_input))
            try:
                guessed = guessed_literals(query.sql, tool_input)
                if guessed:
                    raise QueryError(prompts.sql_guessed(guessed))
                result = self._query(ctx, query.sql)
                if not result.rows and (loose := drop_conditions(query.sql, string_literals(query.sql))) != query.sql:
                    # A word from the question rarely matches the data as written ("date" in
                    # OCR text): show what is there rather than nothing.
                    query.sql, result = loose, self._query(ctx, loose)
                retry = None if result.rows else prompts.sql_no_rows()
            except QueryError as first_error:
                retry = prompts.sql_retry(str(first_error))
            if retry:
                # One second try with the problem shown: small models often fix a column name
                # or an over-narrow condition.
                messages += [{"role": "assistant", "content": query.model_dump_json()},
                             {"role": "user", "content": retry}]
                query = self._ask(ctx, messages, SqlQuery)
                query.sql = drop_conditions(query.sql, guessed_literals(query.sql, tool_input))
                result = self._query(ctx, query.sql)
            if not result.rows:
                return Observation(text=f"No rows matched (SQL: {query.sql}).", sql=query.sql)
            table = format_rows(result.columns, result.rows, result.truncated)
            if not read_rows:
                return self._rows(f"Rows of {query.sql}:\n{table}", query.sql, result)
            answer = self._ask(ctx, prompts.sub_answer_messages(tool_input, query.sql, table),
                               SubAnswer)
            unquoted = unquoted_numbers(answer.answer, f"{tool_input}\n{table}")
            if unquoted and (quote_schema := _quote_schema(result.rows)):
                # Asked to fix it in words, a small model repeats itself; asked afresh to pick a
                # value from the rows (the JSON grammar allows nothing else), it quotes.
                log.info("sub-answer %r quotes %s, which no row holds", answer.answer, unquoted)
                quote = self._ask(ctx, prompts.quote_messages(tool_input, query.sql, table),
                                  quote_schema)
                answer = SubAnswer(answer=prompts.rows_give(tool_input, quote.value))
        except QueryError as e:
            return Observation(text=f"SQL failed twice: {e}", ok=False, sql=query.sql)
        except LLMError as e:
            return Observation(text=f"LLM error: {e}", ok=False)
        # The planner sees the first rows too, so a weak sub-answer cannot hide the data.
        preview = format_rows(result.columns, result.rows[:_ROWS_IN_OBSERVATION], False)
        observation = self._rows(f"{answer.answer}\nSQL: {query.sql}\n{preview}", query.sql, result)
        observation.instance_ids = list(dict.fromkeys(observation.instance_ids +
                                                      parse_instance_ids(answer.answer)))
        return observation

    @staticmethod
    def _rows(text: str, sql: str, result) -> Observation:
        rows = result.as_dicts()
        times, ids = evidence_from_rows(rows, sql)
        return Observation(text=text, times=times, instance_ids=ids, rows=rows[:_ROWS_IN_PROMPT],
                           sql=sql)

    @staticmethod
    def _query(ctx: ToolContext, sql: str):
        return run_query(ctx.db_path, sql, timeout_s=ctx.sql_timeout_s, max_rows=ctx.sql_max_rows)

    @staticmethod
    def _ask(ctx: ToolContext, messages: list[dict], model: type[BaseModel]) -> BaseModel:
        return ctx.complete(messages, response_model=model).parsed


class MemorySearch(Protocol):
    """What the Recall tool needs of the memory store (backend.memory.store.MemoryStore),
    named here so the agent does not import the memory package, which builds on the agent."""

    def search(self, text: str | None = None, kind: str | None = None,
               video_id: str | None = None, k: int = 10, min_similarity: float | None = None,
               vector=None, scale: str | None = None) -> list[MemoryEntry]: ...

    def count_replays(self, entries: list[MemoryEntry]) -> None: ...


class RecallChoice(BaseModel):
    enough: bool
    memory: Literal["episodic", "facts", "tables", "graph"]
    scale: str = Field(max_length=12)
    query: str = Field(max_length=200)


@dataclass
class RecallTool:
    """Iterative retrieval over the video's memories (WorldMM): episodic segments at any scale,
    checked facts from earlier answers, or the tables, until the LLM judges it has enough.

    Round one searches every scale, the facts and the knowledge graph with the planner's input,
    without an LLM call; each later round the LLM picks the memory, scale and query from what
    was found so far.
    """

    store: "MemorySearch"
    name: str = "Recall"
    description: str = ("search the video's memories by meaning, as often as needed: descriptions "
                        "of time segments at several scales (seconds to the whole video) with "
                        "speech and on-screen text, and facts from earlier checked answers; input: "
                        "what to look for")
    rounds: int = 3
    k: int = 3
    facts: bool = True          # off when semantic memory is off for this answer
    # The video's knowledge graph as memories (backend/agent/graph_tool.py, which builds on
    # this module); None leaves it out.
    graph: Callable[[str, ToolContext], list[MemoryEntry]] | None = None

    def run(self, tool_input: str, ctx: ToolContext) -> Observation:
        found: dict[str, MemoryEntry] = {}
        self._add(found, self.store.search(tool_input, kind="episodic", video_id=ctx.video_id,
                                           k=self.k + 1))
        if self.facts:
            self._add(found, self.store.search(tool_input, kind="semantic", video_id=ctx.video_id,
                                               k=2, min_similarity=0.5))
        if self.graph is not None:
            self._add(found, self.graph(tool_input, ctx))
        scales = episodic.scales(ctx.memory_folder)
        for _ in range(self.rounds - 1):
            try:
                choice = ctx.complete(prompts.recall_messages(tool_input, scales, _lines(found)),
                                      response_model=RecallChoice, max_tokens=80).parsed
            except LLMError as e:
                log.warning("recall stopped after %d entries: %s", len(found), e)
                break
            if choice.enough or not choice.query.strip():
                break
            self._add(found, self._retrieve(choice, scales, ctx))
        if not found:
            return Observation(text="(nothing in memory matches)", ok=False)
        hits = list(found.values())
        self.store.count_replays(hits)
        return Observation(text="\n".join(_lines(found)),
                           times=sorted({h.times[0] for h in hits if h.times}),
                           instance_ids=parse_instance_ids(" ".join(h.text for h in hits)))

    def _retrieve(self, choice: RecallChoice, scales: list[str],
                  ctx: ToolContext) -> list[MemoryEntry]:
        if choice.memory == "tables":
            observation = SqlSubTaskTool("Other", *prompts.SUB_TASKS["Other"]).run(choice.query, ctx)
            return [MemoryEntry(id=f"tables:{choice.query}", kind="tables", text=observation.text,
                                times=observation.times[:1], video_id=ctx.video_id)]
        if choice.memory == "graph" and self.graph is not None:
            return self.graph(choice.query, ctx)
        if choice.memory == "facts" and self.facts:
            return self.store.search(choice.query, kind="semantic", video_id=ctx.video_id, k=self.k)
        return self.store.search(choice.query, kind="episodic", video_id=ctx.video_id, k=self.k,
                                 scale=choice.scale if choice.scale in scales else None)

    @staticmethod
    def _add(found: dict[str, MemoryEntry], hits: list[MemoryEntry]) -> None:
        for hit in hits:
            found.setdefault(hit.id, hit)


def _lines(found: dict[str, MemoryEntry]) -> list[str]:
    lines = []
    for hit in found.values():
        if hit.kind == "episodic":
            lines.append(f"[{hit.times[0]:.0f}-{hit.times[1]:.0f} s, {hit.scale}] {hit.text}")
        elif hit.kind == "semantic":
            lines.append(f"[fact] {hit.text}")
        elif hit.kind == "graph":
            lines.append(f"[graph] {hit.text}")
        else:
            lines.append(f"[tables] {hit.text}")
    return lines


@dataclass
class DocumentTool:
    """A knowledge tool over a text document the user attached: embedded chunks, cosine search."""

    title: str
    chunks: list[str]
    vectors: np.ndarray
    k: int = 3
    name: str = "Document"

    @property
    def description(self) -> str:
        return f"search the attached document '{self.title}' for background knowledge"

    @classmethod
    def from_text(cls, title: str, text: str, embed, chunk_words: int = 120) -> "DocumentTool":
        """Whole sentences packed into chunks of about `chunk_words` words, overlapping by one
        sentence, so no fact is cut in half at a chunk boundary."""
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s]
        chunks, current = [], []
        for sentence in sentences:
            if current and sum(len(s.split()) for s in current) + len(sentence.split()) > chunk_words:
                chunks.append(" ".join(current))
                current = current[-1:]
            current.append(sentence)
        chunks.append(" ".join(current))
        return cls(title=title, chunks=chunks, vectors=embed(chunks))

    def run(self, tool_input: str, ctx: ToolContext) -> Observation:
        scores = self.vectors @ ctx.embed([tool_input])[0]
        best = np.argsort(-scores)[: self.k]
        return Observation(text="\n---\n".join(self.chunks[i] for i in best))


def sub_task_tools() -> list[SqlSubTaskTool]:
    return [SqlSubTaskTool(name, description, examples)
            for name, (description, examples) in prompts.SUB_TASKS.items()]
