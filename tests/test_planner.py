"""The MCTS planner's logic, driven by a scripted fake LLM (no model needed)."""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import ValidationError

from backend.agent.options import choose_option
from backend.agent.planner import GivenStep, Planner, PlannerConfig
from backend.agent.search_tree import Node, backpropagate, select_node, softmax
from backend.agent.tools import Observation, ToolContext, evidence_from_rows, parse_instance_ids
from models.llm import LLMBadReply, LLMUnavailable, OpenAIChat, Usage
from tests.fakes import FakeTool, ScriptedLLM, base_url, send_json, serving, step


def make_planner(replies, tools, **config):
    llm = ScriptedLLM(replies)
    ctx = ToolContext(video_id="v", db_path=None, memory_folder=None, llm=llm, embed=None,
                      usage=Usage())
    return Planner(tools, ctx, PlannerConfig(**config)), llm


def test_softmax_values():
    assert softmax([0.0, 0.0]) == pytest.approx([0.5, 0.5])
    assert softmax([0.0, 1.0]) == pytest.approx([1 / (1 + math.e), math.e / (1 + math.e)])
    assert softmax([1000.0, 0.0]) == pytest.approx([1.0, 0.0])  # no overflow


def test_backpropagation_numbers_for_answer_and_failure():
    # root(0) - a(1) - b(2) - leaf(3)
    nodes = [Node(0, None, 0, children=[1]), Node(1, 0, 1, children=[2]),
             Node(2, 1, 2, children=[3]), Node(3, 2, 3, failure="tool error")]
    backpropagate(nodes, 3, -1.0, 0.5)
    assert [n.reward for n in nodes] == pytest.approx(
        [-math.exp(-1.0), -math.exp(-0.5), -1.0, -1.0])
    # A successful sibling leaf under b: +1 flows up with the same decay.
    nodes.append(Node(4, 2, 3, answer="yes"))
    backpropagate(nodes, 4, 1.0, 0.5)
    assert nodes[2].reward == pytest.approx(0.0)
    assert nodes[0].reward == pytest.approx(0.0)
    assert nodes[4].reward == pytest.approx(1.0)


def test_selection_follows_softmax_of_rewards_and_skips_leaves():
    nodes = [Node(0, None, 0, reward=0.0), Node(1, 0, 1, reward=1.0),
             Node(2, 0, 1, reward=-1.0), Node(3, 1, 2, reward=5.0, answer="leaf")]
    rng = random.Random(7)
    picks = Counter(select_node(nodes, rng, max_depth=5).id for _ in range(20000))
    assert 3 not in picks
    expected = softmax([0.0, 1.0, -1.0])
    for node_id, p in zip((0, 1, 2), expected):
        assert picks[node_id] / 20000 == pytest.approx(p, abs=0.015)


def test_failure_is_punished_and_answer_rewarded():
    count = FakeTool("Count", [Observation("SQL failed twice: no such column", ok=False),
                               Observation("6 people", times=[0.0], instance_ids=[12, 3])])
    planner, _ = make_planner([step("Count", "how many?"),          # iteration 1: tool fails
                               step("Count", "people in frame 0"),   # iteration 2 from root
                               step("Answer", "6")], [count], n_solutions=2, seed=1)
    result = planner.solve("how many people are in the first frame?")
    first_leaf, second_leaf = result.nodes[1], result.nodes[3]
    assert first_leaf.failure.startswith("tool error")
    assert first_leaf.reward == pytest.approx(-1.0)
    assert second_leaf.answer == "6" and second_leaf.reward == pytest.approx(1.0)
    # Root: -1 * e^(0.5*(1-1)) from the failure, +1 * e^(0.5*(1-2)) from the answer.
    assert result.nodes[0].reward == pytest.approx(-1.0 + math.exp(-0.5))
    assert result.answered and result.answer == "6"
    assert result.instance_ids == [12, 3] and result.times == [0.0]


def test_expansion_asks_for_an_action_different_from_siblings():
    tool = FakeTool("What", [Observation("banana"), Observation("banana again")])
    planner, llm = make_planner([step("What", "word at 40 s"), step("Answer", "banana"),
                                 step("What", "speech near 40 s"), step("Answer", "banana")],
                                [tool], n_solutions=2)
    result = planner.solve("what word is said at 40 s?")
    # Iteration 2 selects the root or the first step; either way its existing child is listed.
    second_expansion = llm.prompts[2]
    assert "Already tried as the next step" in second_expansion
    assert "What(word at 40 s)" in second_expansion or "Answer(banana)" in second_expansion
    # The chain step after an expansion does not carry the "different" instruction.
    assert "Already tried" not in llm.prompts[1] and "Already tried" not in llm.prompts[3]
    assert len([n for n in result.nodes if n.answer]) == 2


def test_multiple_choice_answers_are_voted():
    planner, _ = make_planner([step("Answer", "1"), step("Answer", "option 2"),
                               step("Answer", "three")], [], n_solutions=3, seed=3, grounded=False)
    result = planner.solve("how many?", options=["two", "three", "four"])
    assert sorted(result.nodes[i].option for i in range(1, 4)) == [1, 1, 2]
    assert result.option == 1 and result.answer == "three"
    assert len(result.chosen_leaves) == 2


def test_open_answers_are_merged_by_the_llm():
    planner, llm = make_planner([step("Answer", "They walk left to right."),
                                 step("Answer", "Mostly rightwards."),
                                 "Most people walk from left to right."], [], n_solutions=2)
    result = planner.solve("which way do people walk?")
    assert result.answer == "Most people walk from left to right."
    assert "They walk left to right." in llm.prompts[-1] and "Mostly rightwards." in llm.prompts[-1]
    assert result.usage.calls == 3


def test_answer_outside_the_options_is_a_format_failure_of_the_old_agent():
    planner, _ = make_planner([step("Answer", "purple elephant")], [], n_solutions=1, grounded=False)
    result = planner.solve("what colour?", options=["red", "blue"])
    assert not result.answered
    assert "not one of the options" in result.nodes[1].failure
    assert result.answer.startswith("could not answer: bad format")


def test_the_answer_grammar_allows_only_the_options():
    planner, _ = make_planner([], [FakeTool("Count", [])])
    schema = planner._step_schema(["red", "blue", "red"])
    for good in (step("Answer", "blue"), step("Answer", "red (again)"), step("Count", "anything")):
        assert schema.model_validate(good)
    for bad in (step("Answer", "purple elephant"), step("Answer", "1"), step("Recall", "x")):
        with pytest.raises(ValidationError):
            schema.model_validate(bad)
    # The JSON schema sent to the server says the same: an enum of the options' texts.
    assert '"enum": ["red", "blue", "red (again)"]' in json.dumps(schema.model_json_schema())


def test_a_computed_value_that_is_an_option_answers_without_an_llm_call():
    count = FakeTool("Count", [Observation("3 people are in view at 0.0 s: #1, #2, #5.",
                                           value="3", support="computed")])
    planner, llm = make_planner([step("Count", "how many people in the first frame")], [count],
                                n_solutions=2, trusted=lambda query: True)
    result = planner.solve("how many people are in the first frame?",
                           options=["two", "three", "four"])
    assert result.option == 1 and result.answer == "three"
    # One planner call; the answer came from the value, and the second solution was not needed.
    assert result.usage.calls == 1 and len(llm.prompts) == 1
    assert result.confidence.level == "high" and result.confidence.basis == "computed"
    assert result.confidence.agreement == "1/1"


def test_a_computed_value_is_high_only_where_its_kind_was_measured_precise():
    seen = []
    count = FakeTool("Count", [Observation("3 people.", value="3", support="computed",
                                           query={"operation": "in_view",
                                                  "conditions": "small, crowd, still"})])
    planner, _ = make_planner([step("Count", "people at the start")], [count], n_solutions=2,
                              trusted=lambda query: seen.append(query) or False)
    result = planner.solve("how many people are there at the start?", options=["2", "3", "4"])
    assert result.answer == "3" and result.confidence.basis == "computed"
    assert result.confidence.level == "medium" and "not measured precise" in \
        result.confidence.explanation
    # The user is told what the measurement is worth, from the committed table.
    assert "in_view in videos like this one (small, crowd, still people) was right" in \
        result.confidence.explanation
    # The judge saw the measurement that computed the answer, with its conditions.
    assert seen == [{"operation": "in_view", "conditions": "small, crowd, still"}]


def _cell(*scenes):
    """A measured cell from (right, of) per scene, with its scene bootstrap bound."""
    from backend.agent.precision import lower_bound
    per_scene = {f"scene {k}": {"right": r, "of": n} for k, (r, n) in enumerate(scenes)}
    return {"right": sum(r for r, _ in scenes), "of": sum(n for _, n in scenes),
            "scenes": per_scene, "lower": lower_bound(per_scene)}


@pytest.mark.parametrize("cell, high", [
    (_cell((15, 15), (15, 15), (15, 15), (15, 15)), True),
    (_cell((30, 30), (29, 30), (30, 30)), True),    # one miss in 90, over three scenes
    (_cell((5, 5), (5, 5)), False),                  # too few questions to be sure
    (_cell((60, 60)), False),                        # one scene, however many questions
    (_cell((20, 20), (20, 20), (20, 20), (5, 20)), False),  # one scene of four mostly wrong
    (None, False)])
def test_the_measured_precision_table_decides(cell, high):
    from backend.agent.precision import earns_high
    table = {"in_view": {"large, few": cell}} if cell else {}
    assert earns_high({"operation": "in_view", "conditions": "large, few"}, table) is high
    assert not earns_high({"operation": "in_view", "conditions": "small, crowd"}, table)
    assert not earns_high({}, table)


def test_a_value_no_option_states_leaves_the_answer_to_the_llm():
    count = FakeTool("Count", [Observation("At most 1 person is in view at once.", value="1",
                                           support="computed")])
    planner, llm = make_planner([step("Count", "most at once"), step("Answer", "no")], [count],
                                n_solutions=2)
    result = planner.solve("are two people ever in view together?", options=["yes", "no"])
    assert result.answer == "no" and len(llm.prompts) == 2
    # Early stop: the answer rests on a computed value, so N = 2 ran one solution. But the
    # option is the model's reading of that value, not the value: never high.
    assert len(result.chosen_leaves) == 1 and result.confidence.basis == "derived"
    assert result.confidence.level == "medium"


@pytest.mark.parametrize("value, options, expected", [
    ("4", ["1", "2", "5", "7", "9"], 2),                    # off by one: the nearest, by code
    ("4", ["two", "three", "six", "eight", "ten"], 1),     # number words are numbers
    ("12.4 s", ["3.0 s", "12.0 s", "20.0 s"], 1),          # the same unit
    ("4", ["3", "5", "7"], None),                          # two equally near: no pick
    ("4", ["1 s", "5 s", "9 s"], None),                    # a count is no time
    ("4", ["1 person", "5 people", "9 people"], None),     # units that differ: no pick
    ("4", ["2 people", "5 people", "9 people"], 1),        # a count of the options' kind
    ("4", ["yes", "no"], None),                            # options that are not numbers
])
def test_the_nearest_option_to_a_computed_number(value, options, expected):
    from backend.agent.options import nearest_option
    assert nearest_option(value, options) == expected


def test_a_computed_number_no_option_states_takes_the_nearest_at_low_confidence():
    count = FakeTool("Count", [Observation("4 people are in view at 2.0 s.", value="4",
                                           support="computed")])
    planner, llm = make_planner([step("Count", "people at 2 s")], [count], n_solutions=2)
    result = planner.solve("how many people are in view at 2 seconds?",
                           options=["1", "2", "5", "7", "9"])
    assert result.answer == "5" and len(llm.prompts) == 1
    assert result.confidence.level == "low" and result.confidence.basis == "nearest"
    leaf = result.nodes[result.chosen_leaves[0]]
    assert "'4'" in leaf.thought and "'5'" in leaf.thought  # both values are stated


def test_a_computed_number_halfway_between_two_options_is_one_of_those_two_at_low():
    # Options two apart and a count off by one: 5 is as near 4 as 6. The model chooses, but
    # only between those two; given all five, the 1.5B model once "matched" 5 to 10.
    count = FakeTool("Count", [Observation("5 people are in view at 2.6 s.", value="5",
                                           support="computed")])
    planner, llm = make_planner([step("Count", "people at 2.6 s"), step("Answer", "10")],
                                [count], n_solutions=1)
    with pytest.raises(ValueError):  # the JSON grammar a real model writes under refuses "10"
        planner.solve("how many people are in view at 2.6 seconds?",
                      options=["2", "6", "10", "4", "8"])
    schema = llm.schemas[-1]
    assert schema.model_validate({"thought": "", "action": "Answer", "action_input": "4"})
    with pytest.raises(ValueError):  # and no more tool calls: the value is computed
        schema.model_validate({"thought": "", "action": "Count", "action_input": "again"})


def test_the_model_s_pick_between_two_equally_near_options_is_flagged_low():
    count = FakeTool("Count", [Observation("5 people are in view at 2.6 s.", value="5",
                                           support="computed")])
    planner, _ = make_planner([step("Count", "people at 2.6 s"), step("Answer", "6")],
                              [count], n_solutions=1)
    result = planner.solve("how many people are in view at 2.6 seconds?",
                           options=["2", "6", "10", "4", "8"])
    assert result.answer == "6"
    assert result.confidence.level == "low" and result.confidence.basis == "nearest"


def test_a_computed_value_an_option_writes_another_way_is_that_option():
    shown = FakeTool("Text", [Observation('The overlay reads "2009-03-12".', value="2009-03-12",
                                          support="computed")])
    planner, llm = make_planner([step("Text", "the date on screen")], [shown], n_solutions=2)
    result = planner.solve("what date does the overlay show?",
                           options=["11 March 2009", "12 March 2009", "12 April 2009"])
    # Chosen by code (one LLM call: the step), as the same date, not as a nearest guess.
    assert result.answer == "12 March 2009" and len(llm.prompts) == 1
    assert result.confidence.basis == "computed"
    assert "written another way" in result.nodes[result.chosen_leaves[0]].thought


def _reading(n: int) -> FakeTool:
    return FakeTool("What", [Observation(f"description {k}", support="read") for k in range(n)])


def test_read_evidence_goes_on_searching_only_while_another_answer_could_win_the_vote():
    # N = 2: the first answer wins the vote (a tie goes to it) whatever a second would say.
    planner, llm = make_planner([step("What", "look"), step("Answer", "yes")], [_reading(1)],
                                n_solutions=2)
    result = planner.solve("is it raining?", options=["yes", "no"])
    assert len(llm.prompts) == 2 and result.answer == "yes"
    assert result.confidence.agreement == "1/1" and result.confidence.level == "medium"
    # N = 3: one answer can still be outvoted, and so can one of two that disagree ...
    planner, llm = make_planner([step("What", "look"), step("Answer", "yes"),
                                 step("What", "look again"), step("Answer", "no"),
                                 step("What", "look once more"), step("Answer", "no")],
                                [_reading(3)], n_solutions=3)
    result = planner.solve("is it raining?", options=["yes", "no"])
    assert len(llm.prompts) == 6 and result.answer == "no"
    assert result.confidence.agreement == "2/3"
    # ... but not two that agree.
    planner, llm = make_planner([step("What", "look"), step("Answer", "yes"),
                                 step("What", "look again"), step("Answer", "yes")],
                                [_reading(2)], n_solutions=3)
    result = planner.solve("is it raining?", options=["yes", "no"])
    assert len(llm.prompts) == 4 and result.confidence.agreement == "2/2"
    # A failed first solution decides nothing: the second is tried.
    broken = FakeTool("What", [Observation("no such table", ok=False),
                               Observation("a description", support="read")])
    planner, llm = make_planner([step("What", "look"), step("What", "look again"),
                                 step("Answer", "no")], [broken], n_solutions=2)
    assert planner.solve("is it raining?", options=["yes", "no"]).answer == "no"


def test_what_ingest_cannot_observe_is_said_plainly():
    unseen = "Ingest cannot see any car: its detector knows only person. Set MEMORYREEL_DETECTOR"
    count = FakeTool("Count", [Observation(unseen, support="unobserved")] * 2)
    # Open question: answered by code with the reason and the setting, no second LLM call.
    planner, llm = make_planner([step("Count", "how many cars")], [count], n_solutions=2)
    result = planner.solve("how many cars pass?")
    assert result.answer.startswith("I cannot tell") and "MEMORYREEL_DETECTOR" in result.answer
    assert len(llm.prompts) == 1 and result.confidence.level == "low"
    # Multiple choice: the next step may only answer (a tool step fails validation), and the
    # pick is flagged as resting on nothing observed.
    planner, llm = make_planner([step("Count", "how many cars"), step("Answer", "2")],
                                [count, FakeTool("Recall", [])], n_solutions=2)
    result = planner.solve("how many cars pass?", options=["1", "2", "3"])
    with pytest.raises(ValidationError):
        llm.schemas[1].model_validate(step("Recall", "cars"))
    assert result.answer == "2" and len(llm.prompts) == 2  # no second solution either
    assert result.confidence.basis == "unobserved" and result.confidence.level == "low"


def test_llm_errors_become_failures_not_crashes():
    planner, _ = make_planner([LLMUnavailable("connection refused at http://127.0.0.1:9"),
                               LLMBadReply("reply is not JSON: 'blah'")], [], n_solutions=2)
    result = planner.solve("anything?")
    assert not result.answered
    assert "connection refused" in result.answer and "not JSON" in result.answer
    assert all(n.reward < 0 for n in result.nodes)


def test_step_and_call_limits_bound_the_work():
    loop = FakeTool("When", [Observation("still looking")] * 10)
    planner, llm = make_planner([step("When", f"try {i}") for i in range(10)], [loop],
                                n_solutions=1, max_depth=3)
    result = planner.solve("when?")
    assert "no answer within 3 steps" in result.answer
    assert len(llm.prompts) == 3
    planner, llm = make_planner([step("When", f"try {i}") for i in range(10)],
                                [FakeTool("When", [Observation("x")] * 10)],
                                n_solutions=4, max_depth=10, max_llm_calls=4)
    result = planner.solve("when?")
    assert len(llm.prompts) == 4 and "budget used up" in result.answer


def test_failed_llm_calls_count_against_the_call_budget():
    planner, llm = make_planner([LLMUnavailable("connection refused")] * 50, [], n_solutions=50,
                                max_llm_calls=5)
    result = planner.solve("anything?")
    assert not result.answered and "connection refused" in result.answer
    assert len(llm.prompts) == 5 and result.usage.calls == 5


class _Down(BaseHTTPRequestHandler):
    """An endpoint that is up but failing: every request is counted and answered HTTP 503."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:
            self.server.requests += 1
        send_json(self, 503, {"error": {"message": "overloaded"}})

    def log_message(self, *args):
        pass


def test_a_failing_endpoint_is_asked_at_most_max_llm_calls_times_per_question():
    # Every HTTP request is counted, retries included: with failed calls left out of the budget,
    # each of the N iterations asked once more (`ask --n 1000` made 1000 requests).
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Down)
    server.requests, server.lock = 0, threading.Lock()
    with serving(server):
        llm = OpenAIChat(base_url(server), "fake", timeout=5)
        ctx = ToolContext(video_id="v", db_path=None, memory_folder=None, llm=llm, embed=None,
                          usage=Usage())
        started = time.monotonic()
        result = Planner([], ctx, PlannerConfig(n_solutions=40, max_llm_calls=4)).solve("q?")
    assert not result.answered and "HTTP 503" in result.answer
    assert server.requests == 4
    assert time.monotonic() - started < 10


def test_multi_digit_instance_ids_stay_whole():
    assert parse_instance_ids("person #12 walks past #3") == [12, 3]
    assert parse_instance_ids("instances 10, 11 and 112 are visible") == [10, 11, 112]
    times, ids = evidence_from_rows([{"instance_id": 12, "t": 1.5}, {"instance_ids": "[3, 14]"}])
    assert ids == [12, 3, 14] and times == [1.5]
    assert parse_instance_ids("Person 6 first appears at 1.20 s; people 2 and 4 leave") == [6, 2, 4]
    assert parse_instance_ids("5 people are visible at 3 seconds") == []
    first = [{"id": 6, "first_seen": 1.2}]
    assert evidence_from_rows(first, "SELECT id, first_seen FROM instances ORDER BY first_seen") == ([1.2], [6])
    assert evidence_from_rows([{"id": 9, "t_start": 2.0}], "SELECT id, t_start FROM timeline") == ([2.0], [])


NUMBERS = ["two", "three", "four"]
ALERTS = ["SPEED CAMERA", "ROAD CLOSED", "PEDESTRIAN ALARM"]


@pytest.mark.parametrize("text, options, expected", [
    ("2", NUMBERS, 2), ("Option 1", NUMBERS, 1), ("b", NUMBERS, 1), ("(c)", NUMBERS, 2),
    ("four", NUMBERS, 2), ("I think it is three.", NUMBERS, 1), ("no idea", NUMBERS, None),
    ("pedestrian alarm", ALERTS, 2), ("The sign says ROAD CLOSED", ALERTS, 1), ("7", NUMBERS, None),
])
def test_choose_option(text, options, expected):
    assert choose_option(text, options) == expected


def test_a_repeated_step_is_asked_again_without_that_tool():
    tool = FakeTool("Count", [Observation("5 people")])
    planner, llm = make_planner([step("Count", "How many?"), step("Count", "how many?"),
                                 step("Answer", "5")], [tool], n_solutions=1)
    result = planner.solve("how many people?")
    assert result.answered and result.answer == "5"
    assert len(tool.inputs) == 1
    assert "Already tried as the next step: Count(how many?)" in llm.prompts[2]
    assert result.usage.calls == 3


def test_repeating_an_earlier_step_again_is_a_failure_of_the_old_agent():
    count, other = FakeTool("Count", [Observation("5 people")]), FakeTool("Other", [Observation("?")])
    planner, _ = make_planner([step("Count", "a"), step("Other", "b"), step("Other", "b"),
                               step("Count", "a")], [count, other], n_solutions=1,
                              grounded=False)
    result = planner.solve("how many people?")
    assert not result.answered and result.nodes[3].failure == "repeated step: Count(a)"
    assert len(count.inputs) == 1 and len(other.inputs) == 1


def test_an_open_question_going_round_in_circles_is_asked_for_an_answer():
    count, other = FakeTool("Count", [Observation("5 people")]), FakeTool("Other", [Observation("?")])
    planner, llm = make_planner([step("Count", "a"), step("Other", "b"), step("Other", "b"),
                                 step("Count", "a"), step("Answer", "5 people")], [count, other],
                                n_solutions=1)
    result = planner.solve("how many people?")
    assert result.answered and result.answer == "5 people"
    assert len(count.inputs) == 1 and len(other.inputs) == 1
    with pytest.raises(ValidationError):  # the last ask offered no tool at all
        llm.schemas[-1].model_validate(step("Count", "a"))


def test_with_options_a_second_repeat_is_asked_for_an_answer_instead():
    count, other = FakeTool("Count", [Observation("5 people")]), FakeTool("Other", [Observation("?")])
    planner, llm = make_planner([step("Count", "a"), step("Other", "b"), step("Other", "b"),
                                 step("Count", "a"), step("Answer", "5")], [count, other],
                                n_solutions=1)
    result = planner.solve("how many people?", options=["4", "5"])
    assert result.answered and result.answer == "5"
    with pytest.raises(ValidationError):  # the last ask offered no tool at all
        llm.schemas[-1].model_validate(step("Count", "a"))


def test_sql_filters_on_guessed_values_are_caught():
    from backend.agent.tools import guessed_literals
    assert guessed_literals("SELECT word FROM speech_words WHERE word LIKE 'hello'",
                            "which word is said at 40 s?") == ["hello"]
    assert guessed_literals("SELECT text FROM ocr WHERE text LIKE '%EXIT%'",
                            "when does the EXIT sign appear?") == []
    assert guessed_literals("SELECT COUNT(*) FROM instances WHERE category = 'person'",
                            "how many people?") == []
    # A prefix pattern is a guess too, though "speaker" and "says" start with it.
    assert guessed_literals("SELECT word FROM speech_words WHERE word LIKE 's%'",
                            "what word does the speaker say at 40 seconds") == ["s%"]


@pytest.mark.parametrize("sql, cut", [
    ("SELECT t_start, word FROM speech_words WHERE t_start BETWEEN 38 AND 42 AND word LIKE 's%' "
     "ORDER BY t_start", "SELECT t_start, word FROM speech_words WHERE t_start BETWEEN 38 AND 42 "
                         "ORDER BY t_start"),
    ("SELECT word FROM speech_words WHERE word = 'hello' AND t_start > 38",
     "SELECT word FROM speech_words WHERE t_start > 38"),
    ("SELECT t, word FROM speech_words WHERE word LIKE '%hi%' ORDER BY t",
     "SELECT t, word FROM speech_words ORDER BY t"),
    # Inside OR or a subquery the cut would change the meaning: left for the LLM retry.
    ("SELECT word FROM speech_words WHERE (word = 'hi' OR t > 3)",
     "SELECT word FROM speech_words WHERE (word = 'hi' OR t > 3)"),
])
def test_guessed_conditions_are_cut_without_an_llm_call(sql, cut):
    from backend.agent.tools import drop_conditions, guessed_literals
    question = "what word does the speaker say at 40 seconds"
    assert drop_conditions(sql, guessed_literals(sql, question)) == cut


def test_numbers_an_answer_cannot_have_read_are_found():
    from backend.agent.tools import unquoted_numbers
    rows = "t | text\n4.00 | 17/09/07120419\n10.00 | 200"
    assert unquoted_numbers("The date is 2007-09-07.", rows) == ["2007"]
    assert unquoted_numbers("It reads 17/09/07120419 at 4 s.", rows) == []
    assert unquoted_numbers("071204, then 200 at 10 s", rows) == []


def test_a_free_answer_with_a_number_from_nowhere_is_asked_again():
    tool = FakeTool("What", [Observation("The overlay reads 17/09/07120419.")])
    planner, llm = make_planner([step("What", "what date is shown?"),
                                 step("Answer", "2007-09-07"), step("Answer", "17/09/07")],
                                [tool], n_solutions=1)
    result = planner.solve("what date is shown on the screen?")
    assert result.answer == "17/09/07"
    assert "Answer(2007-09-07), whose 2007 is in no observation" in llm.prompts[2]
    # Multiple choice needs no check: the option text is mapped, not quoted.
    planner, llm = make_planner([step("What", "what date is shown?"), step("Answer", "2007-09-07")],
                                [FakeTool("What", [Observation("17/09/07120419")])],
                                n_solutions=1)
    assert planner.solve("which date?", options=["2007-09-07", "1999-01-01"]).option == 0
    assert len(llm.prompts) == 2


def test_a_free_answer_that_does_not_say_the_computed_value_is_asked_again_then_replaced():
    where = Observation("#1 person at the bottom centre, at a middle distance from the camera "
                        "(box 247,216-460,428 at 6.4 s).",
                        value="at a middle distance from the camera", support="computed")
    question = "how far from the camera is the first person?"
    planner, llm = make_planner([step("What", question), step("Answer", "It is 2 units away."),
                                 step("Answer", "The person stands in the middle distance.")],
                                [FakeTool("What", [where])], n_solutions=1)
    assert planner.solve(question).answer == "The person stands in the middle distance."
    assert "does not say the computed value 'at a middle distance from the camera'" in \
        llm.prompts[2]
    # Wrong twice: code's value is the answer.
    planner, llm = make_planner([step("What", question), step("Answer", "It is 2 units away."),
                                 step("Answer", "Very close.")],
                                [FakeTool("What", [where])], n_solutions=1)
    assert planner.solve(question).answer == "at a middle distance from the camera"
    # The question said back, after the model went round in circles: asked again all the same.
    planner, llm = make_planner([step("What", question), step("What", question),
                                 step("Answer", "How far from the camera is the first person?"),
                                 step("Answer", "How far from the camera is the first person?")],
                                [FakeTool("What", [where])], n_solutions=1)
    assert planner.solve(question).answer == "at a middle distance from the camera"
    assert "which does not say the computed value" in llm.prompts[-1]
    read = Observation("The sign reads OPEN.", support="read")
    planner, llm = make_planner([step("What", "what sign"), step("Answer", "What is on the sign?"),
                                 step("Answer", "It reads OPEN.")],
                                [FakeTool("What", [read])], n_solutions=1)
    assert planner.solve("What is on the sign?").answer == "It reads OPEN."
    assert "Answer(What is on the sign?), which repeats the question" in llm.prompts[-1]
    # An answer about text that quotes none of it: asked again, then the words themselves.
    signs = Observation('On-screen text: "EXIT 12" at the top left (0.0 s).', support="read",
                        typed={"texts": ["EXIT 12"], "places": {"top left": 1}})
    planner, llm = make_planner([step("What", "the sign"),
                                 step("Answer", "The sign has text written on it."),
                                 step("Answer", "Text is written on the sign.")],
                                [FakeTool("What", [signs])], n_solutions=1)
    assert planner.solve("What is written on the sign?").answer == \
        'The words read on screen: "EXIT 12".'
    assert 'which quotes none of the words read or said (such as "EXIT 12")' in llm.prompts[-1]
    # Of one person, an answer naming none of what they were seen doing (the whole picture's
    # activity instead): asked again, then code's account of that person.
    doing = Observation("#3: standing 0.0-0.2 s. What is happening: busking 0.41 (0-3 s).",
                        support="computed", typed={"activities": {
                            "person": 3, "done": ["standing"],
                            "account": "#3 standing 0.0-0.2 s."}})
    for second, answer in (("Person 3 stands still.", "Person 3 stands still."),
                           ("Person 3 is busking.", "#3 standing 0.0-0.2 s.")):
        planner, llm = make_planner([step("What", "person 3"),
                                     step("Answer", "Person 3 is busking."),
                                     step("Answer", second)],
                                    [FakeTool("What", [doing])], n_solutions=1)
        assert planner.solve("What is person 3 doing?").answer == answer
        assert "which names none of what #3 was seen doing (standing)" in llm.prompts[-1]
    # A count said in words, or 'nobody' for 0, says it: no second call.
    for value, told in (("3", "Three people are in view."), ("0", "Nobody is in view.")):
        count = Observation(f"{value} people are visible at 47 s.", value=value, support="computed")
        planner, llm = make_planner([step("Count", "how many"), step("Answer", told)],
                                    [FakeTool("Count", [count])], n_solutions=1)
        assert planner.solve("how many people are in view at 47 s?").answer == told
        assert len(llm.prompts) == 2


def test_a_stand_in_ends_the_search_with_a_flagged_low_confidence_answer():
    proxy = Observation("Ingest does not recognise cars, but it tracked 5 moving objects",
                        value="5", support="proxy")
    planner, llm = make_planner([step("Count", "how many cars"), step("Answer", "4")],
                                [FakeTool("Count", [proxy]), FakeTool("Recall", [])], n_solutions=2)
    result = planner.solve("how many cars pass?", options=["3", "4", "6"])
    assert result.answer == "4" and len(llm.prompts) == 2   # answer only, no second solution
    with pytest.raises(ValidationError):
        llm.schemas[1].model_validate(step("Recall", "cars"))
    assert result.confidence.basis == "proxy" and result.confidence.level == "low"


def test_the_tool_guide_is_asked_for_only_by_a_step_that_may_call_a_tool():
    """Memory's decision pattern says which tools to call; its rating costs a call, so a step
    that may only answer never asks for it."""
    asked = []

    def guide():
        asked.append(1)
        return "Decision pattern for descriptive questions: ask Count first."

    proxy = Observation("Ingest does not recognise cars, but it tracked 5 moving objects",
                        value="5", support="proxy")
    planner, llm = make_planner([step("Count", "how many cars"), step("Answer", "4")],
                                [FakeTool("Count", [proxy]), FakeTool("Recall", [])], n_solutions=2)
    result = planner.solve("how many cars pass?", options=["3", "4", "6"], guide=guide)
    # the first step may call a tool and reads the guide; the answer-only step after the
    # stand-in is not shown it
    assert result.answer == "4" and asked == [1]
    assert "ask Count first" in llm.prompts[0] and "ask Count first" not in llm.prompts[1]
    # A first step given (a routed query) whose evidence leaves only an answer: no guide at all.
    asked.clear()
    planner, llm = make_planner([step("Answer", "4")], [FakeTool("Count", []),
                                                        FakeTool("Recall", [])], n_solutions=2)
    given = GivenStep(tool="Count", tool_input="how many cars", thought="routed",
                      observation=proxy, replayed=None)
    result = planner.solve("how many cars pass?", options=["3", "4", "6"], given=given,
                           guide=guide)
    assert result.answer == "4" and len(llm.prompts) == 1 and asked == []
    assert "ask Count first" not in llm.prompts[0]


def test_with_options_the_last_call_of_the_budget_is_spent_on_an_answer():
    loop = FakeTool("When", [Observation("still looking")] * 10)
    planner, llm = make_planner([step("When", "try 1"), step("When", "try 2"), step("Answer", "b")],
                                [loop], n_solutions=1, max_depth=10, max_llm_calls=3)
    result = planner.solve("when?", options=["a", "b"])
    assert result.answered and result.answer == "b" and len(llm.prompts) == 3
    with pytest.raises(ValidationError):
        llm.schemas[-1].model_validate(step("When", "try 3"))


def test_with_options_a_search_whose_every_path_failed_still_picks_flagged_low():
    # A rowing clip's search: the activity tool saw canoeing, then the graph held nothing the
    # input named, on both paths; the question had no answer after 98 s. Now, with calls left,
    # the model picks from what the search saw, and the answer says it rests on that alone.
    seen = FakeTool("What", [Observation("canoeing or kayaking 0.85", support="computed")] * 2)
    graph = FakeTool("Graph", [Observation("(the graph holds nothing the input names)",
                                           ok=False)] * 2)
    planner, llm = make_planner([step("What", "activity"), step("Graph", "canoeing"),
                                 step("Graph", "kayaking"), step("Answer", "rowing")],
                                [seen, graph], n_solutions=2, max_llm_calls=12)
    result = planner.solve("what activity is shown?", options=["kicking", "rowing", "pointing"])
    assert result.answered and result.answer == "rowing"
    assert result.confidence.level == "low" and result.confidence.basis == "fallback"
    with pytest.raises(ValidationError):   # the last call could only answer
        llm.schemas[-1].model_validate(step("Graph", "boats"))
    # It answers from the deepest step that observed something: the activity, not the error.
    last = result.nodes[result.chosen_leaves[0]]
    assert result.nodes[last.parent].action == "What"
    # A model that cannot be reached gives no pick either, and the budget still holds.
    planner, llm = make_planner([LLMUnavailable("connection refused")] * 10, [seen, graph],
                                n_solutions=2, max_llm_calls=4)
    assert not planner.solve("what activity is shown?", options=["kicking", "rowing"]).answered
    assert len(llm.prompts) <= 4


def test_an_open_answer_read_straight_from_the_routed_query_ends_the_search():
    """The routed first step ran the typed query the question names, with the question itself:
    a second path could only call it again (on the shared clips it did, at 4 to 6 calls, and
    told the same answer). Where the model first calls a tool, the search goes on as before."""
    texts = Observation('On-screen text: "EXIT 12" at the top (3.0 s)', support="read")
    given = GivenStep(tool="What", tool_input="what is written on the sign?", thought="routed",
                      observation=texts, replayed=None)
    planner, llm = make_planner([step("Answer", "It reads EXIT 12."), step("Answer", "EXIT 12")],
                                [FakeTool("What", [texts] * 3)], n_solutions=2)
    result = planner.solve("what is written on the sign?", given=given)
    assert result.answer == "It reads EXIT 12." and len(llm.prompts) == 1
    # With options the vote still asks for a second path where it could change the vote.
    planner, llm = make_planner([step("Answer", "EXIT 12"), step("What", "the sign"),
                                 step("Answer", "EXIT 12")],
                                [FakeTool("What", [texts] * 3)], n_solutions=3)
    given = GivenStep(tool="What", tool_input="what is written on the sign?", thought="routed",
                      observation=texts, replayed=None)
    result = planner.solve("what is written on the sign?", options=["EXIT 12", "EXIT 13"],
                           given=given)
    assert len(llm.prompts) > 1


def test_an_open_question_a_tool_states_whole_is_answered_with_its_sentence_and_no_call():
    """Who is left of person 1: a model retelling the computed list said "person 1 is on the
    left of person 2", turned round. The tool's own sentence is the answer, with no call."""
    said = "Left of #1 on most of the frames each was seen with it: #2 person, #4 person."
    seen = Observation("Where the object is relative to #1 ...", value="#2 person, #4 person",
                       support="computed", typed={"kinds": {"person": 2}, "said": said})
    given = GivenStep(tool="What", tool_input="who is on the left of person 1?", thought="routed",
                      observation=seen, replayed=None)
    planner, llm = make_planner([], [FakeTool("What", [])], n_solutions=2)
    result = planner.solve("who is on the left of person 1?", given=given)
    assert result.answer == said and llm.prompts == []
    assert result.confidence.basis == "computed"
