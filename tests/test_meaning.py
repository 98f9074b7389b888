"""Typed values in evidence: the spellings on-screen text and speech use, read as what they are,
and options that state the same value, way or place in other words."""

from __future__ import annotations

import pytest

from backend.agent.meaning import option_meaning
from backend.agent.options import misses_value
from backend.agent.typed_values import described, find


@pytest.mark.parametrize("text, kind, key", [
    ("TC 00:01:23:12 CAM1", "timecode", "83s"),
    ("01:00:42;00", "timecode", "3642s"),
    ("REC 2009-03-12 14:05:33", "date", "2009-03-12"),
    ("12.03.2009", "date", "2009-03-12"),            # day first, as most of the world writes it
    ("03/25/2009", "date", "2009-03-25"),            # ... unless that cannot be a date
    ("17/09/07", "date", "2007-09-17"),
    ("March 12, 2009", "date", "2009-03-12"),
    ("12th Mar 2009", "date", "2009-03-12"),
    ("4:05 pm", "clock time", "57900s"),
    ("12:30 AM", "clock time", "1800s"),
    ("speed 80 km/h", "quantity", "80 km/h"),
    ("battery 75%", "quantity", "75 %"),
])
def test_typed_values_are_read_as_what_they_are(text, kind, key):
    found = find(text)
    assert found and (found[0].kind, found[0].key) == (kind, key), found


@pytest.mark.parametrize("text", ["score 3:2", "Exit 12", "31/02/2020", "99:99", "version 2.5",
                                  "ROUTE 66", "17/89/0712-04-29"])  # OCR's misread digits
def test_what_is_no_typed_value_is_left_alone(text):
    assert find(text) == []


def test_a_timecode_rising_with_the_video_is_called_running():
    reads = [("01:00:00:00", 0.0), ("01:00:02:00", 2.0), ("01:00:04:00", 4.0)]
    assert "a running timecode that rises with the video" in described(reads)
    # One reading, or readings that do not rise, are no running clock.
    assert "running" not in described(reads[:1])
    assert "running" not in described([("12:00", 0.0), ("11:00", 5.0)])
    assert described([("EXIT", 1.0)]) == ""


@pytest.mark.parametrize("value, options, expected", [
    ("2009-03-12", ["11 March 2009", "12 March 2009", "12 April 2009"], 1),
    ("00:01:23:12", ["0:01:23", "0:02:23", "1:23:00"], 0),
    ("80 km/h", ["80 mph", "80 km/h", "60 km/h"], 1),
    ("2009-03-12", ["12/03/2009", "2009-03-12"], None),    # two options say it: no pick
    ("25.03.2009", ["25 March 2009", "3 December 2009"], 0),
    # Day or month first is not written: either reading may be meant, so code does not pick.
    ("12.03.2009", ["12 March 2009", "3 December 2009"], None),
    ("17/09/07", ["17 September 2007", "7 September 2017"], None),
    ("banana", ["apple", "banana"], None),                 # nothing typed: equality's job
    ("left to right", ["to the right", "to the left", "towards the camera"], 0),
    ("right to left", ["from left to right", "from right to left"], 1),
    ("towards the camera", ["it approaches the camera", "away from the camera"], 0),
    ("bottom right", ["in the lower right corner", "top left", "upper right"], 0),
    ("centre", ["in the middle", "top left"], 0),
    ("bottom right", ["right", "bottom"], None),           # half a place is not the place
    ("near the camera", ["in the background", "close to the camera", "in the middle distance"], 1),
    ("far from the camera", ["far away", "in the foreground"], 0),
    # A distance with a side is more than the distance says.
    ("far from the camera", ["in the distance on the left", "near the camera"], None),
])
def test_options_match_a_value_by_meaning(value, options, expected):
    assert option_meaning(value, options) == expected


@pytest.mark.parametrize("answer, value, misses", [
    ("The text is in the lower right corner.", "bottom right", False),
    ("The text is at the top left.", "bottom right", True),
    ("Most of them walk from left to right.", "rightwards", False),
    ("He first appears at 12.4 seconds.", "12.4 s", False),
    ("He first appears at 12 seconds.", "12.4 s", True),
    ("It is 2 units away from the camera.", "at a middle distance from the camera", True),
    # Values code cannot compare with a sentence are not judged.
    ("She wears a black top.", "top: black", False),
    # Kinds: said where the answer names one of them, in any number.
    ("Two dogs run across the lawn.", "dog, horse", False),
    ("There is no animal in the video.", "dog", True),
    # A value that names a kind among other words is no list of kinds: not judged so.
    ("It stands to the left.", "left of the car", False),
])
def test_a_free_answer_is_checked_against_the_computed_value_it_rests_on(answer, value, misses):
    assert misses_value(answer, value) is misses


@pytest.mark.parametrize("text, states", [
    ("Are the cars moving or parked?", {"moving", "still"}),
    ("parked", {"still"}),
    ("the dogs stand still", {"still"}),
    ("not moving", {"still"}),                 # a moving word denied is stillness
    ("is the van stationary?", {"still"}),
    ("driving", {"moving"}),
    ("does the bus move?", {"moving"}),
    # "Still" as "yet" says nothing of moving.
    ("is the car still there?", set()),
    ("is the man still walking?", {"moving"}),
    ("which colour does the bus have?", set()),
])
def test_whether_a_thing_moves_or_keeps_still_is_read_in_its_phrasings(text, states):
    from backend.agent.meaning import motion, motions

    assert motions(text) == states
    assert motion(text) == (next(iter(states)) if len(states) == 1 else None)
