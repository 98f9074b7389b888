"""The alternatives a question names itself, read as its options (`choices.named`)."""

from __future__ import annotations

import pytest

from backend.agent.choices import named


@pytest.mark.parametrize("question, alternatives", [
    ("Is the woman sitting or standing?", ["sitting", "standing"]),
    ("Are the players running or walking?", ["running", "walking"]),
    ("Is the film in colour or black and white?", ["in colour", "black and white"]),
    ("Is the girl holding a pen or a brush?", ["a pen", "a brush"]),
    ("Is the dog on the sofa or on the floor?", ["on the sofa", "on the floor"]),
    ("Is the cook standing up or sitting down?", ["standing up", "sitting down"]),
    ("Is it day or night?", ["day", "night"]),
    ("Is this indoors or outdoors?", ["indoors", "outdoors"]),
    ("Was the clip filmed indoors or outdoors?", ["indoors", "outdoors"]),
    ("Is the man in the grey coat jogging or cycling?", ["jogging", "cycling"]),
    ("Is person 3 waving or clapping?", ["waving", "clapping"]),
    ("Is the boat white, grey or blue?", ["white", "grey", "blue"]),
    ("Which hand does she use, the left or the right?", ["the left", "the right"]),
    ("What colour is the van: red, white or silver?", ["red", "white", "silver"]),
    # a pronoun in a later alternative stands for the thing the first one names
    ("Is the cat on the box or under it?", ["on the box", "under the box"]),
    ("Is the boat moving towards the camera or away from it?",
     ["towards the camera", "away from the camera"]),
])
def test_a_choice_asked_in_words_gives_its_alternatives_in_order(question, alternatives):
    assert named(question) == alternatives


@pytest.mark.parametrize("question", [
    "Is there a cat or a dog?",             # whether any of them is there: yes or no
    "Does anyone jump or fall?",
    "Is the man smiling or not?",
    "Are both doors open or shut?",
    "What is the man doing?",               # no alternatives at all
    "Who is on the left of person 1?",
    "What happens after the horse or the rider falls",  # a which-question lists after a comma
    "Is the child eating soup, bread, rice, fish or cake?",  # an inventory, not a choice
    "Is the bowl red or red?",
])
def test_a_question_that_names_no_choice_gives_none(question):
    assert named(question) == []
