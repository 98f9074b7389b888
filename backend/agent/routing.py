"""Questions reach the evidence they name, by code, before the model reads anything.

A question about what is said must read speech, one about what is written must read on-screen
text, one about a colour must read the measured colours; one about when something arrives or
leaves, the appearance times; a count at a time, at most at once or of different ones, that
count. Left to a 1.5B planner, such questions
were answered from whichever tool it called first (what a speaker says, answered from text on
screen). Here the question's own words choose the typed query of its first step; the planner
goes on from that observation as from any other (`GivenStep`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from backend import kinds, places
from backend.agent import (activity_queries, choices, digest, meaning, option_match, ordinals,
                           queries, unsupported, video_tables)
from backend.agent.planner import DIGEST, GivenStep
from backend.agent.timephrases import resolve
from backend.agent.tools import Observation, observed

# (words in the question, operation, sub-task tool that hosts it), the first match wins: a
# question about a sign "saying" something is about text, so text comes before speech.
_ROUTES = (
    (r"\b(written|writes?|writing|text|sign|signs|caption|subtitles?|title|banner|label|"
     r"on (?:the )?screen|displayed|printed|overlay|timestamp|time ?code|running time)\b",
     "screen_text", "What"),
    (r"\b(say|says|said|saying|speak|speaks|spoke|spoken|speaker|talk|talks|talking|mention|"
     r"mentions|mentioned|words?|hear|heard|voice|narrator)\b", "speech", "What"),
    (r"\b(colou?r|colou?red|wear|wears|wearing|dressed)\b", "appearance", "What"),
)
PEOPLE = re.compile(r"\b(person|people|man|men|woman|women|boy|girl|child|children|someone|"
                    r"somebody|anyone|anybody|pedestrian|pedestrians|he|she|they|speaker)\b",
                    re.IGNORECASE)


_QUOTED = re.compile(r"(?:^|\s)[\"“‘']([^\"”’']{1,60})[\"”’'](?=\s|$|[?.,!])"
                     r"|\bthe (?:word|phrase|name)s? (\w+)", re.I)


def quoted_words(question: str) -> str:
    """The words a question quotes ('when is "good morning" said', 'the word welcome'), or ''."""
    match = _QUOTED.search(question)
    return (match.group(1) or match.group(2)).strip() if match else ""


# When something arrives or leaves (`queries.names_an_edge`): the appearance query, whose edge
# the words decide (`queries.asked_edge`).
_WHEN = re.compile(r"^\s*(?:when|at what (?:time|moment|point|second)|what time|how (?:many "
                   r"seconds|long) (?:in|into|after|before))\b", re.I)
# A count the question words as one of the three counting queries; a plain "how many" with no
# time, no "at once", no "different" and no passing by ("how many cars are there") can mean
# either of two, so code states both (`_both_counts`).
MOST = re.compile(r"\b(?:at once|at the same time|simultaneous(?:ly)?|together|at (?:the )?most|"
                   r"largest|highest|greatest|maximum|peak|busiest)\b", re.I)
_DISTINCT = re.compile(r"\b(?:different|distinct|separate|individual|unique|in total|total|"
                       r"altogether|overall|over the whole|during the (?:whole )?(?:video|clip))\b",
                       re.I)
# Things that pass, come in or turn up: each counts once, so the count is of different ones
# ("how many cars pass through the car park", "how many people come to the table"). Left to the
# planner, such a count cost a step and a query call, and the model could ask "at once".
_PASSING = re.compile(r"\b(?:pass(?:es|ed)?|cross(?:es|ed)?|enter(?:s|ed)?|arrive[sd]?|"
                      r"appear(?:s|ed)?|(?:show|turn)(?:s|ed)? up|(?:go(?:es)?|went|come[s]?|came|"
                      r"walk(?:s|ed)?|drive[s]?|drove|ride[s]?|rode|run[s]?|ran|fl(?:y|ies|ew)|"
                      r"cycle[sd]?) (?:in|into|through|by|past|across|to|along)\b)", re.I)


# Which kinds of things appear ("what kinds of vehicles", "which of these is seen").
_KINDS = re.compile(r"\b(?:what|which) (?:kinds?|types?|sorts?) of\b|\bwhich of (?:these|the "
                    r"following)\b|\b(?:what|which)(?: \w+)? (?:vehicles?|animals?|pets?|"
                    r"appliances?|objects?|things?)\b", re.I)
# Whether a kind is there at all ("is there a boat", "does a dog appear"), and where it is.
_PRESENCE = re.compile(r"^\s*(?:is|are|was|were) there (?:a|an|any|some)\b|^\s*(?:does|do|did) "
                       r"(?:a|an|any) [\w ]+? (?:appear|show up|pass|come)|"
                       r"^\s*(?:can|could|do|did) (?:you|we|i) see (?:a|an|any|some)\b", re.I)
# Moving as such, not a way of moving that can be an action or a passing ("how many people walk
# in", "how many are running"): the tracks that moved.
_MOVE = re.compile(r"\b(?:mov(?:e|es|ing)|in motion)\b", re.I)
# Whether the camera moves, with the camera as what is asked about ("is the camera still?", not
# "is the girl beside the camera still?"): the scenes' camera motion.
_CAMERA = re.compile(r"^\s*(?:is|was|does|did|has)\s+the\s+camera\s+(?:\w+\s+)?(?:mov\w*|still|"
                     r"static|steady|fixed|stationary|pan\w*|tilt\w*|zoom\w*|shak\w*)\b", re.I)
# "Is the hall empty at 12 s": a count at that time, of whoever is in it (`video_tables.OCCUPANTS`).
_EMPTY_AT = re.compile(r"^\s*(?:is|was|are|were) (?:the|this|that) [\w ]+? (?:empty|deserted|vacant)\b",
                       re.I)
# "Which way do most people walk", "in what direction does the car go": where things go.
_DIRECTION = re.compile(r"\b(?:which|what) (?:way|direction)s?\b|\bin (?:which|what) direction\b",
                        re.I)
# What someone does, what activity or sport is shown: the actions and tags.
_ACTIVITY = re.compile(r"\b(?:doing|activit(?:y|ies)|actions?|sports?|exercis(?:e|es|ing)|"
                       r"perform(?:s|ing)?|play(?:s|ing)?|happen(?:s|ing|ed)?|going on|"
                       r"(?:what|which) (?:does|do|did) [\w' ]{1,30}? do)\b", re.I)
_HELD = re.compile(r"\b(?:hold|holds|holding|held|carry|carries|carrying|carried)\b", re.I)
_WHERE = re.compile(r"^\s*where (?:is|are|was|were|does|do|did)\b", re.I)
# Where in the picture a named thing is ("at 12 s, where in the picture is the cyclist", "in
# which part of the frame is the car", "how far from the camera is the dog"), unless it asks
# where the thing goes.
_WHERE_AT = re.compile(r"(?:^|[,;:]\s*)where\b(?! (?:\w+ ){0,4}?(?:go|goes|going|went|head|heads|"
                       r"heading|move|moves|moving|drive|drives|walk|walks|travel|travels)\b)"
                       r"|\b(?:in )?(?:which|what) (?:part|side|corner|third) of the (?:picture|frame|"
                       r"screen|image|video|view)\b|\b(?:on|at|in) (?:which|what) side\b"
                       r"|\bhow (?:far|close|near)\b", re.I)


# A where-question whose options are places on screen and that names no kind ("where is the
# running time shown"): where the text on screen is.
_WHERE_IN_PICTURE = re.compile(r"^\s*(?:where|in which part|in what part|which part)\b", re.I)
# A question that asks what or which, whose options name kinds of things ("which animal crosses
# the field": a dog, a deer, nobody): which kinds appear.
_WHICH = re.compile(r"^\s*(?:what|which|who)\b", re.I)


def route(question: str, duration: float | None = None,
          options: list[str] | None = None) -> tuple[str, str] | None:
    """(operation, tool) the question's words call for, or None. With the video's duration,
    counts at a time it names are routed too; with options, a which-question whose options
    name kinds goes to the kinds seen."""
    if counted := _count(question, duration, plain=not options):
        return counted
    if video_tables.YES_NO.search(question) and MOST.search(question) and _named_kind(question):
        return "most_at_once", "Count"  # "are N of a kind ever in view together": compared
    if options and len({activity_queries.fact_named(o) for o in options} - {None}) == \
            len(options) >= 2:
        return "activity", "What"  # "in colour or black and white": the shots' facts say
    if options and _named_kind(question) and all(option_match.colours_in(o) for o in options):
        return "appearance", "What"  # "are the caps blue or red", naming no colour as such
    for pattern, operation, tool in _ROUTES:
        if re.search(pattern, question, re.IGNORECASE):
            return operation, tool
    if _CAMERA.search(question):
        return "scene", "How"  # "is the camera moving", "does the camera pan"
    if (_WHEN.search(question) or video_tables.WHO.search(question)) and \
            queries.names_an_edge(question):
        return "first_appearance", "When"  # "when does the bus leave", "who comes in last"
    # The time a question names is read against a duration of 0 where none is known: only its
    # phrase is needed then, to tell a time from a count (`queries.asked_count`).
    span = resolve(question, duration if duration is not None else 0.0)
    at_a_time = duration is not None and span is not None
    if _EMPTY_AT.search(question):
        return "in_view", "Count"  # at a time, or, with none, the stretches when it is empty
    if _HELD.search(question):
        return "held", "What"
    if _ACTIVITY.search(question) and (options or not digest.is_open(question)):
        return "activity", "What"
    if _DIRECTION.search(question) and _named_kind(question):
        return "movement", "What"
    if relation_sides(question, options) is not None:  # "which animal is on the sofa"
        return "relation", "What"
    if meaning.ways(question) and _named_kind(question):
        # "do the cars go to the left or to the right?": where things go, not what they do
        # (the walking of "do the people walk to the left or to the right")
        return "movement", "What"
    if video_tables.YES_NO.search(question) and activity_queries.named_actions(question):
        return "activity", "What"  # "is anyone sitting", "does person 2 wave"
    if video_tables.YES_NO.search(question) and meaning.motions(question) and \
            _named_kind(question):
        return "movement", "What"  # "are the cars moving or parked", "is anyone moving"
    if _KINDS.search(question):
        # Two or more options that name no COCO kind are told apart by the tags (ImageNet's
        # animals, tools, places), which also see the COCO kinds.
        return ("activity" if options and _named_options(options) <= len(options) - 2
                else "kinds"), "What"
    if _WHERE_AT.search(question) and _named_kind(question) and \
            (not options or all(meaning.place(o) or meaning.distance(o) for o in options)):
        return "position", "What"
    objects = [kind for kind in kinds.named(question) if kind != "person"]
    if (objects or PEOPLE.search(question)) and (
            _PRESENCE.search(question) or queries.asked_count(question, span) is not None):
        # "Is there a dog?", "are there more than five cars?", "is anybody there?": a count,
        # compared in code
        return ("in_view" if at_a_time else "count_distinct"), "Count"
    if _WHERE.search(question) and objects:
        return ("in_view", "Count") if at_a_time else ("movement", "What")
    if options and _WHERE_IN_PICTURE.search(question) and all(meaning.place(o) for o in options):
        return "screen_text", "What"  # where a thing no kind names is shown: text on screen
    if options and _WHICH.search(question):
        named = _named_options(options)
        if named >= len(options) - 1:
            return "kinds", "What"
        if named <= 1:  # "which animal": a parrot, a cockatoo, a dog: beyond the COCO kinds
            return "activity", "What"
    return None


# "Where is the dog relative to the person?", whose options say the relation.
_RELATIVE = re.compile(r"\b(?:relative to|in relation to|compared (?:to|with))\b", re.I)
_ANY_THING = re.compile(r"^\s*(?:what|which|who)\b(?: \w+)? (?:is|are|was|were|stands?|sits?|lies?)"
                        r"\s*$", re.I)


def relation_sides(question: str, options: list[str] | None = None) -> tuple[str, str] | None:
    """(the thing asked about, the one it is relative to) of a question that says a relation
    between two named things ("is the man to the left of the car", "is person 4 in front of
    person 2"), or asks where one is relative to another with options that say relations."""
    said = places.relation_said(question)
    if said is not None:
        _, start, end = said
    elif options and all(places.relation_said(o) for o in options) and \
            (relative := _RELATIVE.search(question)):
        start, end = relative.span()
    else:
        return None
    sides = _thing(question[:start]), _thing(question[end:])
    if not sides[0] and _ANY_THING.search(question[:start]):
        return "", sides[1]  # "what is on the sofa": whatever it holds of
    return sides if all(sides) else None


def _thing(text: str) -> str:
    """'#4' for a numbered one, else the kind the text names ('' for none)."""
    one = video_tables.ONE.search(text)
    return f"#{one.group(1)}" if one else _named_kind(text)


def _named_options(options: list[str]) -> int:
    """How many options name COCO kinds (or none of them: 'nobody')."""
    return sum(option_match.option_kinds(o) is not None for o in options)


def _count(question: str, duration: float | None, plain: bool) -> tuple[str, str] | None:
    """A count of a named kind ("how many people are on screen at 2 s" counts people, whatever
    "on screen" says of text), as one of the three counting queries; with `plain`, a plain
    count too (asked open: with options, which of its two readings is meant is the model's
    choice)."""
    if not (video_tables.HOW_MANY.search(question) and _named_kind(question)):
        return None
    if meaning.direction(question) or meaning.motion(question) == "still" or \
            _MOVE.search(question):
        # "how many people walk to the right", "how many cars are parked", "how many are
        # moving": the tracks going it, staying or moving
        return "movement", "Count"
    if _named_kind(question) == "person" and not _PASSING.search(question) and \
            activity_queries.counted_actions(question):
        return "activity", "Count"  # "how many people are sitting", "how many people ride a bike"
    if MOST.search(question):
        return "most_at_once", "Count"
    if _DISTINCT.search(question):
        return "count_distinct", "Count"
    if duration is not None and resolve(question, duration) is not None:
        return "in_view", "Count"
    if _PASSING.search(question) and not _WHEN.search(question):  # not "how many seconds in"
        return "count_distinct", "Count"
    if plain and _PLAIN_COUNT.search(question):
        return "count_distinct", "Count"  # and the most at once: `_both_counts`
    return None


# "How many bottles are there?", "how many people are in the video?": as many as are in view
# at once (three bottles on a table) or as many as come and go (six people taking turns).
_PLAIN_COUNT = re.compile(r"\b(?:are there|is there|(?:are|is) (?:in|on) (?:the|this) "
                          r"(?:video|clip|film|footage|scene|picture)|(?:do|can) (?:you|we) see|"
                          r"(?:are|is) (?:seen|shown|visible))\b", re.I)


def _both_counts(question: str, result: video_tables.Result,
                 tables: video_tables.VideoTables, query: queries.TypedQuery) -> video_tables.Result:
    """A plain count's two readings in one computed sentence, code's answer (`typed["said"]`):
    the most in view at once, then the different ones over the video (a thing the tracker lost
    and found again counts again there: three bottles shifted about made seven tracks)."""
    plain = _count(question, tables.duration, plain=False) is None and \
        _count(question, tables.duration, plain=True) is not None
    if not plain or result.support != "computed":
        return result
    at_once = queries.run(query.model_copy(update={"operation": "most_at_once"}), question,
                          tables)
    if at_once.support != "computed" or at_once.value == result.value:
        return result
    said = f"{at_once.text} {result.text}"
    return replace(result, text=said, typed={**(result.typed or {}), "said": said},
                   times=sorted(set(at_once.times) | set(result.times)))


def _target(operation: str, question: str) -> str:
    """The kind the question counts or times ('' for any), in `kinds`' words."""
    if operation in ("screen_text", "speech") or _EMPTY_AT.search(question):
        return ""  # what is said or written; whoever is in the place asked about
    # One tracked object where the question names it ("person 7", "#3"): a count is of a kind.
    if operation not in queries.COUNTS and (one := video_tables.ONE.search(question)):
        return f"#{one.group(1)}"
    if operation == "activity":  # a single person's actions when the question names one, else all
        return ""
    if operation == "kinds":
        return next((w for w in re.findall(r"[a-z]+", question.lower()) if w in kinds.GROUP_WORDS), "")
    return _named_kind(question) or ("person" if video_tables.WHO.search(question) else "")


def _named_kind(question: str) -> str:
    """The first kind the question names, people included, else a group it names (`kinds.
    GROUP_WORDS`); '' for none."""
    named = kinds.named(question)
    if named:
        return named[0]
    if PEOPLE.search(question):
        return "person"
    return next((kinds.GROUP_WORDS[w] for w in re.findall(r"[a-z]+", question.lower())
                 if w in kinds.GROUP_WORDS), "")


def first_step(question: str, tables: video_tables.VideoTables,
               options: list[str] | None = None) -> GivenStep | None:
    """The typed query the question names, run on this video as the first step; None when the
    question names no kind of evidence or the query found nothing to show."""
    chosen = route(question, tables.duration, options)
    if chosen is None:
        return None
    operation, tool = chosen
    target = _target(operation, question)
    words = quoted_words(question) if operation in ("screen_text", "speech") else ""
    if operation == "relation":
        target, words = relation_sides(question, options) or ("", "")
    if operation in _ONE_OF and not target.startswith("#"):
        kind = target or _named_kind(question)
        one = ordinals.pick(tables, kind, question, resolve(question, tables.duration))
        if one is None and operation != "appearance":  # asked its colour, a colour picks none
            one = ordinals.pick_by_look(tables, kind, question)
        target = f"#{one}" if one is not None else target
    whoever = operation in ("kinds", "held", "activity", "scene") or _EMPTY_AT.search(question) or \
        (operation == "relation" and words)
    if operation not in _READ and not whoever and not target:
        return None  # a count or a time of what? the model reads the question
    query = queries.TypedQuery(operation=operation, target=target, time="", until="",
                               words=words)
    result = queries.run(query, question, tables)
    if operation == "count_distinct":
        result = _both_counts(question, result, tables, query)
    if result.support == "none":
        return None
    return GivenStep(tool=tool, tool_input=question,
                     thought=f"the question asks about {_WHAT[operation]}, so that is "
                             f"{'read' if operation in _READ else 'computed'} first",
                     observation=observed(result, query), replayed=None)


def digest_step(question: str, tables: video_tables.VideoTables) -> GivenStep | None:
    """For an open question ("what does the person do?"), the digest code writes of the
    interval asked about (`digest`), as the first step; the planner has it told in sentences."""
    if not digest.is_open(question):
        return None
    lines, times, span = digest.build(tables, question)
    # What people do is code's account, person by person; the model tells the rest.
    said = digest.doing(tables, span) if digest.asks_doing(question) else ""
    return GivenStep(tool=DIGEST, tool_input=question,
                     thought="an open question: code writes down what the tables hold first",
                     observation=Observation(text="\n".join(lines), times=sorted(set(times))[:20],
                                             support="computed",
                                             value=digest.account(tables, span),
                                             typed={"said": said} if said else {}),
                     replayed=None)


def unsupported_step(question: str, tables: video_tables.VideoTables,
                     options: list[str]) -> GivenStep | None:
    """Where nothing the video holds speaks to any option (`unsupported`), the digest as the
    one step before the answer: searching tool after tool finds nothing, at 2 to 12 calls."""
    if unsupported.speaks_to(tables, options):
        return None
    lines, times, _ = digest.build(tables, question)
    text = "\n".join(lines) + "\nNothing the video holds speaks to any option: choose from this."
    return GivenStep(tool=DIGEST, tool_input=question,
                     thought="no kind, action, tag, speech or text on screen of this video "
                             "speaks to any option, so no tool can add evidence: one reading",
                     observation=Observation(text=text, times=sorted(set(times))[:20],
                                             support="unsupported"),
                     replayed=None)


@dataclass(frozen=True)
class AskedChoice:
    """What code makes of a choice asked in words: the alternatives to ask it with as options
    (None: it stays open), the step routed with them (run once, reused as the first step) and
    code's own "cannot tell" where nothing speaks to any alternative."""
    options: list[str] | None = None
    routed: GivenStep | None = None
    untold: GivenStep | None = None


def asked_choice(question: str, tables: video_tables.VideoTables) -> AskedChoice:
    """A choice asked in words ("is the person sitting or standing?", `choices`). Its
    alternatives are asked as options where the routed step's typed evidence picks one of them,
    or where no step is routed and something the video holds speaks to one (the planner then
    searches among them). Else the question stays open: the routed tool's own answer stands ("is
    the road busy or empty": "No: ... in view throughout"; "on a table or on the floor" with no
    table tracked: that it cannot be observed, where a reading among the options had picked the
    floor); and where nothing the video holds speaks to any alternative, code says it cannot
    tell ("is it day or night": one reading had called a daylit street night)."""
    alternatives = choices.named(question)
    if not alternatives:
        return AskedChoice()
    step = first_step(question, tables, alternatives)
    if step is not None:
        decision = option_match.decide(step.observation.typed, alternatives)
        return AskedChoice(alternatives, step) if decision and decision.chosen is not None \
            else AskedChoice()
    if unsupported.speaks_to(tables, alternatives):
        return AskedChoice(alternatives)
    listed = " or ".join(f"'{a}'" for a in alternatives)
    return AskedChoice(untold=GivenStep(
        tool="What", tool_input=question,
        thought="nothing the video holds tells its alternatives apart",
        observation=Observation(
            text=f"Nothing this video's tables hold (the kinds tracked, what people do, the "
                 f"picture's tags and facts, words said or shown) speaks to {listed}.",
            support="unobserved"),
        replayed=None))


_READ = ("screen_text", "speech", "appearance")
# Operations on one thing, which a place in the picture or a colour may pick out of several
# (`ordinals`).
_ONE_OF = ("movement", "position", "appearance", "activity", "held")
_WHAT = {"screen_text": "on-screen text", "speech": "speech", "appearance": "measured colours",
         "first_appearance": "when something arrives or leaves",
         "most_at_once": "the most in view at once",
         "count_distinct": "how many different ones appear",
         "in_view": "how many are in view at a time", "kinds": "which kinds of things appear",
         "held": "what people hold", "movement": "where something goes",
         "position": "where something is in the picture",
         "relation": "where one thing is relative to another",
         "activity": "what people do and what the picture shows",
         "scene": "the picture itself: the camera's motion"}
