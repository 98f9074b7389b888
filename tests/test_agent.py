"""The agent end to end: real embedded LLM on real clips, and hostile or broken LLM replies."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import pytest
from pydantic import ValidationError

from backend.ask import ask
from backend.agent.tools import ToolContext, sub_task_tools
from backend.library import Library, content_hash
from backend.sql_runner import run_query
from models.llm import Usage
from tests.fakes import ScriptedLLM


def _entry(ingested, settings, name):
    return Library(settings.home).get(ingested(name).video_id)


# --- real model, real clips -------------------------------------------------------------------

@pytest.fixture(scope="module")
def agent_settings(library_settings):
    # The product's default model (Qwen2.5-Coder 1.5B, embedded); N = 2 as in the app. Memory
    # off: these check the tools and the planner, tests/test_memory.py checks memory.
    return replace(library_settings, n_solutions=2, memory=False)


def test_counts_people_in_first_frame_from_a_computed_value(ingested, agent_settings):
    entry = _entry(ingested, agent_settings, "mot15_TUD-Campus.mp4")
    in_db = run_query(entry.db_path, "SELECT COUNT(DISTINCT instance_id) FROM detections WHERE "
                                     "frame = (SELECT MIN(frame) FROM detections)",
                      timeout_s=2, max_rows=1).rows[0][0]
    options = ["3", "4", "5", "6", "7"]
    question = "how many people are in the first frame"
    # The question's words route it to the count at that time: code answers, the model is not
    # asked at all.
    routed = ask(entry.video_id, question, agent_settings, options=options)
    # Without the router, the model's step fills the typed query that computes the same.
    planned = ask(entry.video_id, question, replace(agent_settings, answer_checks=False),
                  options=options)
    for answer in (routed, planned):
        assert answer.answered, answer.answer
        assert options[answer.option] == str(in_db)
        assert any("detections" in e.sql and e.support == "computed" for e in answer.evidence)
        assert answer.confidence.basis == "computed"
    assert routed.usage.llm_calls == 0
    # The planner's step and the typed query; the value answered, and N = 2 stopped early.
    assert planned.usage.llm_calls <= 3 and planned.usage.prompt_tokens > 0


def test_hears_the_word_said_at_40_seconds(ingested, agent_settings):
    entry = _entry(ingested, agent_settings, "autoeditor_example_speech.mp4")
    options = ["apple", "banana", "cherry", "hello", "goodbye"]
    answer = ask(entry.video_id, "what word does the speaker say when the timer reaches 40 seconds",
                 agent_settings, options=options)
    assert answer.answered, answer.answer
    assert answer.answer == "banana"
    assert any(37 <= t <= 43 for t in answer.times), answer.times


def test_reads_the_overlay_text_of_the_highway_clip(ingested, agent_settings):
    # No "PEDESTRIAN" alert is on screen in this clip (see test_ingest); the overlay's date is.
    entry = _entry(ingested, agent_settings, "bgslib_video02_highway.avi")
    answer = ask(entry.video_id, "what date is shown in the text on the screen", agent_settings)
    assert answer.answered, answer.answer
    # The overlay "17/09/07 12:04:19" is read without spaces and with a slash dropped now and
    # then ("1709/7120411"), so the answer must quote six digits in a row of some reading.
    readings = [re.sub(r"\D", "", row[0]) for row in
                run_query(entry.db_path, "SELECT text FROM ocr", timeout_s=2, max_rows=200).rows]
    digits = re.sub(r"\D", "", answer.answer)
    assert any(digits[i:i + 6] in r for i in range(len(digits) - 5) for r in readings), answer.answer


# --- hostile and broken LLMs ------------------------------------------------------------------

@pytest.mark.parametrize("sql", [
    "DELETE FROM instances",
    "ATTACH DATABASE '/tmp/x.db' AS x",
    "SELECT 1; DROP TABLE detections",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n",
])
def test_malicious_sql_from_the_model_never_writes_or_hangs(ingested, library_settings, sql):
    entry = _entry(ingested, library_settings, "mot15_TUD-Campus.mp4")
    before = content_hash(entry.db_path)
    llm = ScriptedLLM([{"sql": sql}, {"sql": sql}])
    ctx = ToolContext(video_id=entry.video_id, db_path=entry.db_path, memory_folder=entry.folder,
                      llm=llm, embed=None, usage=Usage(), sql_timeout_s=0.5)
    tool = next(t for t in sub_task_tools() if t.name == "Count")
    started = time.monotonic()
    observation = tool.write_sql("how many people?", ctx)
    assert not observation.ok and "SQL failed twice" in observation.text
    assert time.monotonic() - started < 10
    assert content_hash(entry.db_path) == before
    assert len(llm.prompts) == 2  # one retry with the error shown, then a failure


def test_endpoint_down_gives_could_not_answer(ingested, library_settings):
    entry = _entry(ingested, library_settings, "mot15_TUD-Campus.mp4")
    down = replace(library_settings, llm_base_url="http://127.0.0.1:9/v1", llm_timeout_s=5)
    # A question code cannot answer alone (a plain count it now states by itself).
    answer = ask(entry.video_id, "why do the people walk?", down)
    assert not answer.answered
    assert answer.answer.startswith("could not answer:")
    assert "127.0.0.1:9" in answer.answer or "connect" in answer.answer.lower()


def test_endpoint_returning_garbage_gives_could_not_answer(ingested, library_settings,
                                                           garbage_endpoint):
    entry = _entry(ingested, library_settings, "mot15_TUD-Campus.mp4")
    broken = replace(library_settings, llm_base_url=garbage_endpoint, llm_timeout_s=5)
    answer = ask(entry.video_id, "how many people are there?", broken, options=["1", "2"])
    assert not answer.answered and answer.option is None
    assert answer.answer.startswith("could not answer:")
    assert len(answer.tree) == 3  # root and one failed step per iteration, recorded


# 38-42 s: the word is said near 40 s, at 39.7, 39.8 or 40.24 s by Whisper's word times
# depending on the CPU; two seconds either side keep it in the rows wherever it lands.
@pytest.mark.parametrize("first_sql, calls", [
    # Cut without an LLM call: the guessed word filter sits beside the time filter.
    ("SELECT t_start, word FROM speech_words WHERE t_start BETWEEN 38 AND 42 AND word LIKE 'hello'", 2),
    # Inside OR it cannot be cut cleanly, so the model is asked again with the guess named.
    ("SELECT t_start, word FROM speech_words WHERE word LIKE 'hello' OR t_start > 38", 3),
])
def test_sql_tool_drops_a_guessed_filter_and_answers_from_rows(ingested, library_settings,
                                                               first_sql, calls):
    entry = _entry(ingested, library_settings, "autoeditor_example_speech.mp4")
    replies = [{"sql": first_sql}]
    if calls == 3:
        replies.append({"sql": "SELECT t_start, word FROM speech_words WHERE t_start BETWEEN 38 AND 42"})
    # The sub-answer quotes the word's time as this machine's rows hold it: a number no row
    # holds would (rightly) send the tool back to the model for a quoted value.
    said_at = run_query(entry.db_path, "SELECT t_start FROM speech_words WHERE t_start BETWEEN 38 "
                                       "AND 42 AND word LIKE '%banana%'", timeout_s=2,
                        max_rows=1).rows[0][0]
    llm = ScriptedLLM(replies + [{"answer": f"The speaker says Banana at {said_at:.2f} s."}])
    ctx = ToolContext(video_id=entry.video_id, db_path=entry.db_path, memory_folder=entry.folder,
                      llm=llm, embed=None, usage=Usage())
    tool = next(t for t in sub_task_tools() if t.name == "What")
    observation = tool.write_sql("which word is said at 40 seconds?", ctx)
    if calls == 3:
        assert "'hello', which the question does not mention" in llm.prompts[1]
    assert "hello" not in observation.sql and "BETWEEN 38 AND 42" in observation.sql
    # The rows the sub-answer read are the real ones around 40 s, with the word in them.
    assert "banana" in llm.prompts[-1].lower()
    assert observation.ok and "banana" in observation.text.lower()
    assert observation.times and all(38 <= t <= 42 for t in observation.times)
    assert ctx.usage.calls == calls and not llm.replies


def test_a_sub_answer_with_numbers_no_row_holds_is_replaced_by_a_quoted_value(ingested,
                                                                              library_settings):
    # What the 1.5B model did with the highway overlay: "17/09/07120419" became "2007-09-07".
    entry = _entry(ingested, library_settings, "bgslib_video02_highway.avi")
    readings = [row[0] for row in run_query(entry.db_path, "SELECT text FROM ocr ORDER BY t",
                                            timeout_s=2, max_rows=30).rows]
    sql = "SELECT t, text FROM ocr ORDER BY t"
    tool = next(t for t in sub_task_tools() if t.name == "What")

    def run(replies):
        llm = ScriptedLLM([{"sql": sql}, {"answer": "The date shown is 2007-09-07."}] + replies)
        ctx = ToolContext(video_id=entry.video_id, db_path=entry.db_path,
                          memory_folder=entry.folder, llm=llm, embed=None, usage=Usage())
        return tool.write_sql("what date is shown on the screen?", ctx), llm

    observation, llm = run([{"value": readings[2]}])
    assert observation.text.startswith(f'For "what date is shown on the screen?" the rows give: '
                                       f'{readings[2]}\n')
    assert "2007" not in observation.text and not llm.replies
    # The pick is held to the rows by the JSON grammar: a value from elsewhere cannot be chosen.
    with pytest.raises(ValidationError):
        run([{"value": "2007-09-07"}])


def test_knowledge_and_iterative_memory_tools(ingested, library_settings, tmp_path):
    from backend.agent.tools import DocumentTool, RecallTool
    from backend.factory import embedder_for
    from backend.memory.store import MemoryStore

    entry = _entry(ingested, library_settings, "autoeditor_example_speech.mp4")
    embed = embedder_for(library_settings).embed
    llm = ScriptedLLM([{"enough": False, "memory": "episodic", "scale": "fine",
                        "query": "the speaker says banana"},
                       {"enough": True, "memory": "episodic", "scale": "", "query": ""}])
    ctx = ToolContext(video_id=entry.video_id, db_path=entry.db_path, memory_folder=entry.folder,
                      llm=llm, embed=embed, usage=Usage())
    manual = ("The studio opens at nine. " * 40 + "Fruit words used in recordings: the word banana "
              "marks the end of a take. " + "Parking is behind the building. " * 40)
    document = DocumentTool.from_text("studio handbook.txt", manual, embed)
    found = document.run("what does the word banana mean in a recording?", ctx)
    assert found.ok and "marks the end of a take" in found.text.split("---")[0]

    store = MemoryStore(replace(library_settings, memory_dir=str(tmp_path / "memory")), embed=embed)
    memory = RecallTool(store=store).run("which fruit does the speaker name", ctx)
    lines = memory.text.split("\n")
    # Round one searched every scale; round two, chosen by the LLM, the fine scale for "banana".
    assert "Scales: fine, " in llm.prompts[0] and "Found so far:\n[" in llm.prompts[0]
    assert any("banana" in line.lower() and ", fine]" in line for line in lines), lines
    assert any(36 <= t <= 42 for t in memory.times)
    assert ctx.usage.calls == 2 and not llm.replies
    counts = store.replay_counts()
    assert len(counts) == len(lines) and {c.kind for c in counts} == {"episodic"}


# --- grounded answers -------------------------------------------------------------------------

@pytest.mark.parametrize("question, options, tempting", [
    # Each observation invites an answer in other words than any option's.
    ("what is the person wearing?", ["a red coat", "a blue coat", "nothing visible"],
     "person in dark grey top and blue bottom"),
    ("how many people are in the first frame?", ["2", "3", "4"], "three people, ids #1, #2 and #5"),
    ("which way do most people walk?", ["left to right", "right to left"],
     "6 of 8 move from the left edge towards the right edge"),
])
def test_the_real_small_model_can_only_answer_with_an_option(question, options, tempting):
    from backend.agent import prompts
    from backend.agent.options import option_labels
    from backend.agent.planner import Planner
    from models.llama_server import get_embedded
    from models.weights import qwen_gguf

    llm = get_embedded(qwen_gguf(config_cache(), "0.5b")).client()
    tools = sub_task_tools()
    planner = Planner(tools, ToolContext(video_id="v", db_path=None, memory_folder=None, llm=llm,
                                         embed=None, usage=Usage()))
    history = [{"thought": "look", "action": "What", "action_input": question,
                "observation": tempting}]
    messages = prompts.planner_messages({t.name: t.description for t in tools}, question, options,
                                        history, [])
    # Only the answer branch, as after an observation of something ingest cannot see: the
    # grammar must hold the 0.5B model to the options' texts.
    schema = planner._step_schema(options, exclude=tuple(t.name for t in tools))
    reply = llm.complete(messages, response_model=schema, max_tokens=120)
    assert reply.parsed.action == "Answer" and reply.parsed.action_input in option_labels(options)
    either = llm.complete(messages, response_model=planner._step_schema(options), max_tokens=120)
    step = either.parsed.root
    assert step.action != "Answer" or step.action_input in options, either.text


def config_cache():
    from backend.config import load

    return load().cache_dir


def test_what_ingest_cannot_see_is_said_and_the_guess_flagged(ingested, agent_settings):
    entry = _entry(ingested, agent_settings, "mot15_TUD-Campus.mp4")  # no audio track
    question = "what word does the speaker say at 1 second?"
    open_answer = ask(entry.video_id, question, agent_settings)
    assert open_answer.answered, open_answer.answer
    assert open_answer.answer.startswith("I cannot tell") and "no audio" in open_answer.answer
    assert open_answer.confidence.basis == "unobserved" and open_answer.confidence.level == "low"
    guess = ask(entry.video_id, question, agent_settings, options=["hello", "stop", "banana"])
    assert guess.answered and guess.option is not None  # a pick, flagged as a guess
    assert guess.confidence.basis == "unobserved" and guess.confidence.level == "low"
    assert guess.usage.llm_calls <= 4


def test_rows_with_nothing_to_quote_do_not_crash_the_sub_agent(ingested, library_settings):
    # Seen on a new clip: a sub-answer with a number no row holds, over rows whose cells are all
    # empty, built an enum of no values and raised instead of answering.
    entry = _entry(ingested, library_settings, "mot15_TUD-Campus.mp4")
    llm = ScriptedLLM([{"sql": "SELECT NULL AS reading FROM video"},
                       {"answer": "The reading is 2007."}])
    ctx = ToolContext(video_id=entry.video_id, db_path=entry.db_path, memory_folder=entry.folder,
                      llm=llm, embed=None, usage=Usage())
    tool = next(t for t in sub_task_tools() if t.name == "What")
    observation = tool.write_sql("what is the reading?", ctx)
    assert observation.ok and "2007" in observation.text and not llm.replies
