"""The planner and the real sub-task tools never raise: a fake LLM answers every call with a
random reply that fits the schema asked for, or with garbage, or fails; the tables are a real
ingested clip and an empty video. Every question ends in an answer or 'could not answer: ...'."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import sqlite_utils
from pydantic import BaseModel, ValidationError

from backend.agent.planner import Planner, PlannerConfig
from backend.agent.tools import Observation, ToolContext, sub_task_tools
from backend.library import Library
from backend.schema import create_tables
from models.llm import LLMBadReply, LLMTimeout, LLMUnavailable, Reply, Usage
from tests.conftest import schema_value

# Strings a model might put anywhere: times, ids, SQL, quotes, unicode, nothing, too much.
_TEXTS = ["", "0", "3", "#2", "person 99", "people", "cars", "the first frame", "1:10", "the end",
          "between 10 and 5 s", "-4 s", "1e309", "banana", "SELECT * FROM instances",
          "SELECT printf('%.*c', 2000000000, 'x')", "'; DROP TABLE detections; --", "%", "_",
          "ünïcødé 🚗", "a" * 300, "how many people are in view at 2 seconds?",
          "are two people ever in view at the same time", "what text is on screen?", "null"]


class FuzzLLM:
    """Replies that fit the requested schema (as a grammar would make them), garbage, or faults."""

    name = "fuzz"

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.calls = 0

    def complete(self, messages, *, response_model: type[BaseModel] | None = None,
                 max_tokens=512, temperature=0.0):
        self.calls += 1
        roll = self.rng.random()
        if roll < 0.05:
            raise self.rng.choice([LLMTimeout("slow"), LLMUnavailable("down"), LLMBadReply("junk")])
        usage = Usage(calls=1, prompt_tokens=50, completion_tokens=5, seconds=0.0)
        if response_model is None:
            return Reply(text=self.rng.choice(_TEXTS) or "x", parsed=None, usage=usage)
        schema = response_model.model_json_schema()
        reply = schema_value(schema, schema.get("$defs", {}), self.rng, _TEXTS)
        try:
            parsed = response_model.model_validate_json(json.dumps(reply))
        except ValidationError as e:  # what OpenAIChat raises for a reply off the schema
            raise LLMBadReply(f"not a valid {response_model.__name__}: {e.errors()[0]['msg']}") from None
        return Reply(text=json.dumps(reply), parsed=parsed, usage=usage)


class OddTool:
    """A tool whose observations are empty, huge, failed, unobservable or computed."""

    name = "Recall"
    description = "search memory"

    def __init__(self, rng: random.Random):
        self.rng = rng

    def run(self, tool_input, ctx):
        return self.rng.choice([
            Observation(""), Observation("x" * 5000), Observation("failed", ok=False),
            Observation("cannot be seen", support="unobserved"),
            Observation("2 people", value="2", support="computed"),
            Observation("nothing", value="", support="none")])


@pytest.fixture(scope="module")
def databases(ingested, library_settings, tmp_path_factory) -> list[Path]:
    empty = tmp_path_factory.mktemp("empty") / "video.db"
    db = sqlite_utils.Database(empty)
    create_tables(db)
    db["video"].insert({"id": "0" * 16, "name": "empty.mp4", "sha256": "", "fps": 25.0,
                        "frames": 0, "duration": 0.0, "width": 0, "height": 0, "has_audio": 0,
                        "codec": "", "ingested_at": "", "models": "{}"})
    db.close()
    tud = Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id).db_path
    return [tud, empty]


def test_random_replies_never_crash_the_agent(databases):
    steps = replies = 0
    for seed in range(700):
        rng = random.Random(seed)
        llm = FuzzLLM(seed)
        ctx = ToolContext(video_id="v", db_path=databases[seed % 2], memory_folder=None, llm=llm,
                          embed=None, usage=Usage(), sql_timeout_s=0.5, sql_max_rows=50,
                          typed_queries=seed % 5 != 0)
        config = PlannerConfig(n_solutions=rng.choice([1, 2, 3]), max_depth=4, max_llm_calls=12,
                               seed=seed, grounded=seed % 5 != 0)
        options = rng.choice([None, ["yes", "no"], ["2", "three", "4", "4"], ["a", "b", "c"]])
        result = Planner([*sub_task_tools(), OddTool(rng)], ctx, config).solve(
            rng.choice(_TEXTS) or "what happens?", options=options)
        steps += len(result.nodes) - 1
        replies += llm.calls
        assert result.answer, result.nodes
        assert result.answered or result.answer.startswith("could not answer:")
        if result.answered and options:
            assert result.option is not None and result.answer == options[result.option]
        assert result.confidence.level in ("high", "medium", "low", "none")
    assert steps > 1000 and replies > 2000  # planner steps; LLM replies, sub-agents' included
