"""Follow-up questions keep being the question asked: only a reference to an earlier turn is
resolved, and a rewrite that answers or rephrases the question is refused (scripted LLM)."""

from __future__ import annotations

from backend.agent import followup
from tests.fakes import ScriptedLLM

OVERVIEW = [("what happens in this video?",
             "Two people walk across: #1 person moves left to right, #2 person stands.")]


def test_a_question_without_a_reference_is_kept_as_asked_and_the_model_not_asked():
    # The rewrite seen in the app: the question came back as a statement and was answered.
    llm = ScriptedLLM([{"question": "The woman is moving left to right."}])
    asked = "What is the woman doing?"
    assert followup.standalone(asked, OVERVIEW, llm.complete) == asked
    assert llm.prompts == []
    # "is there" and "this video" point at nothing said before.
    for asked in ("is there a car?", "how long is this video?"):
        assert not followup.refers_back(asked), asked


def test_a_pronoun_is_resolved_to_what_an_earlier_question_named():
    llm = ScriptedLLM([{"question": "What colour is the car?"}])
    turns = [("is there a car?", "Yes: one, from 2.0 s to 9.4 s.")]
    assert followup.standalone("what colour is it?", turns, llm.complete) == \
        "What colour is the car?"
    assert len(llm.prompts) == 1


def test_an_id_an_answer_gave_may_name_the_referent():
    llm = ScriptedLLM([{"question": "What is person 3 holding?"}])
    turns = [("who enters first?", "Person 3, at 1.2 s.")]
    assert followup.standalone("what is he holding?", turns, llm.complete) == \
        "What is person 3 holding?"


def test_ellipsis_is_resolved():
    llm = ScriptedLLM([{"question": "How many cars are in the first frame?"}])
    turns = [("how many people are in the first frame?", "3 people.")]
    assert followup.standalone("and cars?", turns, llm.complete) == \
        "How many cars are in the first frame?"


def test_a_rewrite_that_answers_or_changes_the_question_is_refused():
    turns = [("is there a car?", "Yes, a red car drives slowly to the left at 2.0 s.")]
    refused = [
        "The car is red.",                          # a statement: the question answered
        "Which car drives to the left?",            # lost its question word
        "What colour is the car driving slowly?",   # took up the answer's account
    ]
    for reply in refused:
        llm = ScriptedLLM([{"question": reply}])
        assert followup.standalone("what colour is it?", turns, llm.complete) == \
            "what colour is it?", reply


def test_a_failing_model_leaves_the_question_as_asked():
    from models.llm import LLMError

    llm = ScriptedLLM([LLMError("down")])
    assert followup.standalone("when does she leave?", OVERVIEW, llm.complete) == \
        "when does she leave?"
