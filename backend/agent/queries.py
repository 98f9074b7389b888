"""Typed queries: the LLM fills a small form, code writes the SQL and states the result.

DoraemonGPT's sub-agents write SQL from scratch and read the rows back; a 1.5B model gets both
wrong often (invented filters, frame 1 for "the first frame", a count re-read as another). Here
a sub-task tool asks the LLM only for an operation and its arguments (`TypedQuery`, under the
JSON grammar); this module resolves the time phrase against the video's duration, runs SQL it
wrote itself through the read-only runner, and returns the value it computed, stated plainly
("3 people are in view at 0.0 s: #1, #2, #5"), so no second LLM call paraphrases rows.

Every operation is generic: objects in view at a time or during an interval, the most at once,
distinct count, first/last appearance, movement, appearance, speech, on-screen text, timeline,
and the picture itself (shots, camera motion, brightness, colours).
A question about something ingest could not observe (a category the detector does not know, a
video without an audio track) gets an observation that says so and names the setting that
would change it. What an operation reads and returns (the tables, its target, its result) is in
`video_tables`; where things are, how they move and look in `picture_queries`, where one is
relative to another in `relation_queries`, the operations on the picture itself in
`scene_queries`.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Literal

from pydantic import BaseModel, Field

from backend import kinds
from backend.agent import precision
from backend.agent.activity_queries import activity
from backend.agent.kind_queries import held, kinds_seen
from backend.agent.picture_queries import appearance, movement, position
from backend.agent.relation_queries import relation
from backend.agent.text_queries import screen_text, speech, timeline
from backend.agent.scene_queries import scene
from backend.agent.timephrases import Span, resolve
from backend.agent.video_tables import (OCCUPANTS, WHO, YES_NO, Result, Target, VideoTables,
                                        category_sql, id_list, instance_rows, instance_sql,
                                        none_appears, parse_target, plural, quoted,
                                        unseen_target)
from backend.errors import QueryError
from backend.ingest import describe
from backend.ingest.tracks import CROWD
from models.motion import CATEGORY as MOVING

OPERATIONS: dict[str, str] = {
    "in_view": "the objects in view at a time or during an interval: their number and ids",
    "most_at_once": "the largest number of objects in view at the same moment, and when",
    "count_distinct": "how many different objects appear in the video or an interval",
    "first_appearance": "when an object, or the first of a kind, first appears",
    "last_appearance": "when an object, or the last of a kind, is last seen",
    "movement": "how an object, or the objects of a kind, move (direction across the frame)",
    "position": "where in the picture an object, or the objects of a kind, are at a time "
                "(left, centre or right; top, middle or bottom; near or far)",
    "relation": "where an object, or the objects of a kind, are relative to another named in "
                "words ('car', '#2'): left or right of it, in front of or behind it, next to it, "
                "on it, above or below it",
    "appearance": "what an object, or the objects of a kind, look like (colours)",
    "kinds": "which kinds of things appear (people, vehicles, animals, objects), how many of each",
    "held": "what people hold, carry or wear: the objects seen inside a person's box",
    "activity": "what people do (walking, sitting, riding, drinking, ...) and what the whole "
                "picture shows beyond the tracked kinds (animals, tools, places; indoors or "
                "outdoors, black and white or colour), at a time, over an interval or the whole video",
    "speech": "what is said at or near a time, during an interval, or when given words are said",
    "screen_text": "the text shown on screen at a time or in the whole video, and where it is",
    "timeline": "descriptions of what is seen between two times, or in the whole video",
    "scene": "the picture itself: shots and cuts, camera motion (static, pan, tilt, zoom), how "
             "much moves, brightness and colours, at a time, over an interval or the whole video",
    "sql": "none of these fits: write an SQL query instead",
}
Operation = Literal[tuple(OPERATIONS)]  # type: ignore[valid-type]


class TypedQuery(BaseModel):
    operation: Operation
    target: str = Field(max_length=40, description="'person', 'car', '#3', or '' for any object")
    time: str = Field(max_length=40, description="the time as the question says it ('at 10 s', "
                                                 "'1:10', 'the start', 'the end'), or ''")
    until: str = Field(max_length=40, description="the end of an interval, or ''")
    words: str = Field(max_length=60, description="words to find in speech or on-screen text, "
                                                  "the other thing of a relation, or ''")


_PEOPLE_SEEN_NEAR = 0.6   # seconds: a detection this close to the asked time counts as "at" it


def run(query: TypedQuery, question: str, tables: VideoTables) -> Result:
    """Resolve the query's arguments (code first reads the time phrase in the question itself),
    then compute; never an LLM call. Tables that refuse a query give a failed result."""
    span = None
    try:
        span = (resolve(question, tables.duration)
                or resolve(f"{query.time} to {query.until}" if query.until.strip() else query.time,
                           tables.duration, bare_number=True))
        result = _run(query, question, tables, span)
        # Measured on people only: a count of cars borrows nothing from a count of people.
        if result.support == "computed" and query.operation in precision.MEASURED and \
                parse_target(query.target).category == "person":
            result.conditions = tables.conditions
            if query.operation in COUNTS and result.value.isdigit() and \
                    precision.in_crowd(result.conditions):
                _as_estimate(result, query.operation, precision.crowd_factor(tables))
        elif result.support == "computed" and query.operation in precision.OBJECT_MEASURED:
            result.conditions = precision.object_conditions(tables,
                                                            list((result.typed or {}).get("kinds", {})))
    except QueryError as e:
        result = Result(f"The tables refused the query: {e}", support="none")
    result.span = span
    return result


def _as_estimate(result: Result, operation: str, factor: float | None) -> None:
    """A crowd's count said as what it is: an estimate. People at a time (or at most at once)
    are scaled up for those hidden in the crowd where that was measured (`precision.estimate`);
    a count of different people is the tracks', said as "about"."""
    seen = int(result.value)
    there = precision.estimate(seen, factor) if operation != "count_distinct" else seen
    seen_text = re.sub(r"; never \d+ or more at once", "", result.text)
    if there != seen:
        result.value = str(there)
        result.text = (f"About {there}, an estimate. {seen_text} That counts the people the "
                       f"detector sees; in crowds, {factor:g} people were there for each one seen "
                       f"(measured), as people wholly behind others go unseen.")
    else:
        said = re.sub(rf"(?<![#\d.]){seen}\b", f"about {seen}", seen_text, count=1)
        result.text = (said[:1].upper() + said[1:] + f" In a crowd (more than {CROWD} at once), "
                       f"people wholly behind others go unseen, so this is an estimate.")
    off = precision.relative_error({"operation": operation, "conditions": result.conditions})
    if off is not None:
        result.text += f" Counts like it were off by {off:.0%} on average, measured."


def _run(query: TypedQuery, question: str, tables: VideoTables, span: Span | None) -> Result:
    if query.operation == "scene":  # about the picture, not an object: no target
        return scene(tables, span, question, query.words)
    target = parse_target(query.target)
    if query.operation in COUNTS and _EMPTY.search(question.lower()) and _a_place(target):
        target = OCCUPANTS
    operation = (_appearance_edge(*asked_edge(question, query.operation),
                                  asked_who=bool(WHO.search(question)))
                 if query.operation in ("first_appearance", "last_appearance")
                 else _OPERATIONS[query.operation])
    if query.operation == "appearance":
        ordinal = _ORDINAL.search(question.lower())
        worn = next((describe.GARMENTS[w] for w in re.findall(r"[a-z]+", question.lower())
                     if w in describe.GARMENTS), "")
        operation = partial(appearance, part=worn, ordinal="" if not ordinal else
                            "first" if ordinal.group(1) in ("first", "earliest") else "last")
    if query.operation in ("relation", "position", "activity", "movement", "held"):
        operation = partial(_OPERATIONS[query.operation], question=question)
    if query.operation in _OBJECT_OPERATIONS and (stand_in := _moving_stand_in(tables, target)):
        return _through_moving_objects(operation, tables, target, stand_in, span, query.words)
    result = operation(tables, target, span, query.words.strip())
    if query.operation in COUNTS and result.support == "computed" and result.value.isdigit():
        _answer_yes_no(result, question, span, at_once=query.operation == "most_at_once",
                       label=target.label)
    return result


COUNTS = {"in_view", "most_at_once", "count_distinct"}
# Whether a place is empty is about who or what is in it, not its furniture: a room with a table
# and a chair in it is empty. Its count is of people and of things that move by themselves.
_EMPTY = re.compile(r"\b(?:empty|nobody|no one|no-one|deserted|vacant|no (?:people|person|one|"
                    r"objects?))\b")
_OBJECT_OPERATIONS = COUNTS | {"first_appearance", "last_appearance", "movement", "position",
                               "appearance"}
# Read whatever thing the question names: "what does the speaker say" is the speech at a time.
UNTARGETED = {"speech", "screen_text", "timeline", "scene"}


def _a_place(target: Target) -> bool:
    """Whether an emptiness question's target is where to count, not what: '', 'room', 'the
    table' (in "is the table empty" the table is no occupant); people or cars are counted."""
    return target.instance is None and target.category not in kinds.MOVING


def _moving_stand_in(tables: VideoTables, target: Target) -> Target | None:
    """The moving objects background subtraction tracked, if it ran and left some unnamed, for
    a kind the detectors cannot name (a tractor; a car, when objects were not tracked), or for a
    kind that moves by itself when the object detector named no moving thing at all (cars seen
    from straight above): they may be what the question means. Where it did name moving things
    (cars on a motorway), a kind it never named is taken to be absent."""
    if MOVING not in tables.categories or target.category is None:
        return None
    if tables.unseen_category(target):
        return Target(None, MOVING, MOVING)
    if target.category in kinds.MOVING and target.category != "person":
        movers = ", ".join(quoted(k) for k in sorted(kinds.MOVING - {"person"}))
        found = tables.rows(f"SELECT SUM(category IN ({movers})) AS named, "
                            f"SUM(category = {quoted(MOVING)}) AS unnamed FROM instances")[0]
        if not found["named"] and found["unnamed"]:
            return Target(None, MOVING, MOVING)
    return None


def _through_moving_objects(operation, tables: VideoTables, target: Target, stand_in: Target,
                            span: Span | None, words: str) -> Result:
    """The operation over moving objects, said to be a stand-in: the model judges (support
    'proxy'), since a moving object may or may not be a {target}."""
    result = operation(tables, stand_in, span, words.strip())
    things = kinds.plural(target.label)
    if tables.unseen_category(target):
        why = (f"Ingest's detectors cannot name {things}, but it tracked things that moved and "
               f"are not people")
    else:  # "found no cars" read to a small model as "there are no cars"
        why = ("Ingest tracked things that moved and are not people, which its object detector "
               "could not name (it named no kind that moves by itself in this video)")
    result.text = (f"{why}, with their size, colour and path measured; they may be the {things} "
                   f"the question means. " + result.text)
    if result.support in ("computed", "read"):
        result.support = "proxy"
    return result


_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_AT_ONCE = re.compile(r"\b(?:ever|at once|at the same time|together|simultaneously)\b")


def asked_count(question: str, span: Span | None) -> tuple[str, int] | None:
    """The count a yes/no question asks about, as (comparison, n): 'is the hall deserted' ->
    ('==', 0); 'is anybody on the stairs' -> ('>=', 1); 'are 4 dogs ever together' -> ('>=', 4)
    with at_once; 'more than 3' -> ('>', 3). None for a question that is not yes/no about a
    count."""
    said = " ".join(question.lower().split())
    if not YES_NO.match(said):
        return None
    if span:  # "at 12 seconds" is a time, not a count
        said = said.replace(span.phrase, " ")
    if _EMPTY.search(said):
        return ("==", 0)
    number = re.search(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")\b(?!\s*(?:s|sec|secs|seconds?|"
                       r"minutes?|min|:))", said)
    if number:
        n = int(number.group(1)) if number.group(1).isdigit() else _NUMBER_WORDS[number.group(1)]
        before = said[:number.start()]
        if re.search(r"(?:#|\b(?:person|object|instance|id|track|number))\s*$", before):
            return None  # "is person 3 visible": an id, not a count
        if re.search(r"\b(?:more than|over)\s*$", before):
            return (">", n)
        if re.search(r"\b(?:fewer than|less than|under)\s*$", before):
            return ("<", n)
        if re.search(r"\b(?:at least)\s*$", before) or re.search(r"\bor more\b", said[number.end():]):
            return (">=", n)
        return ("at_once", n) if _AT_ONCE.search(said) else ("==", n)
    if re.search(r"\b(?:any|anyone|anybody|someone|somebody|anything|something)\b", said) or \
            re.search(r"^(?:(?:is|are|was|were) there|(?:can|could|do|did) (?:you|we|i) see) "
                      r"(?:a|an|some)\b", said):
        return (">=", 1)
    return None


def _answer_yes_no(result: Result, question: str, span: Span | None, at_once: bool,
                   label: str) -> None:
    """A yes/no question about a count is answered by comparing, in code, on the first line
    ("No: 9 people, not fewer than 3."), which is the answer: small models read 'never N or
    more at once' as yes to 'are N of them ever in view together', and told a computed "not
    fewer than N" as "No, there are fewer than N"."""
    asked = asked_count(question, span)
    if asked is None:
        return
    comparison, n = asked
    if comparison == "at_once":
        comparison = ">=" if at_once else "=="
    count = int(result.value)
    holds = {"==": count == n, ">=": count >= n, ">": count > n, "<": count < n}[comparison]
    wanted = {"==": f"exactly {n}", ">=": f"{n} or more", ">": f"more than {n}",
              "<": f"fewer than {n}"}[comparison]
    result.value = "yes" if holds else "no"
    # Whether any is there, or none, the count says by itself: "No: 0 dogs."
    compared = "" if (comparison, n) in ((">=", 1), ("==", 0)) else \
        f", {'' if holds else 'not '}{wanted}"
    result.text = (f"{result.value.capitalize()}: {plural(count, label)}{compared}.\n"
                   f"{result.text} The question asks about {wanted}; the count is {count}, so: "
                   f"{result.value}.")


def in_view(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := unseen_target(tables, target):
        return unseen
    if span is None and target == OCCUPANTS:
        return _empty_stretches(tables)  # "is the room ever empty"
    if span is None:
        return most_at_once(tables, target, None, words)
    if not span.is_moment:
        return _in_view_during(tables, target, span)
    nearest = tables.rows(f"SELECT frame, t FROM detections ORDER BY ABS(t - {span.start}) LIMIT 1")
    label = target.label
    if not nearest or abs(nearest[0]["t"] - span.start) > _PEOPLE_SEEN_NEAR:
        sql = f"SELECT frame, t FROM detections ORDER BY ABS(t - {span.start}) LIMIT 1"
        return Result(f"Nothing is in view at {span}: 0 {kinds.plural(label)} (no "
                      f"detection within {_PEOPLE_SEEN_NEAR} s of it), so the scene is empty.",
                      value="0", sql=sql, times=[span.start], instance_ids=[])
    frame, t = nearest[0]["frame"], nearest[0]["t"]
    sql = (f"SELECT d.instance_id, i.category, d.t, d.x1, d.y1, d.x2, d.y2 FROM detections d "
           f"JOIN instances i ON i.id = d.instance_id WHERE d.frame = {frame}{instance_sql(target)} "
           f"ORDER BY d.instance_id")
    rows = tables.rows(sql)
    ids = [r["instance_id"] for r in rows]
    if target.instance is not None:
        seen = bool(ids)
        return Result(f"#{target.instance} is {'' if seen else 'not '}in view at {t:.1f} s.",
                      value="yes" if seen else "no", sql=sql, rows=rows, times=[t],
                      instance_ids=[target.instance])
    where = "; ".join(f"#{r['instance_id']} {r['category']} at the {tables.position(r)}" for r in rows)
    verb = "is" if len(ids) == 1 else "are"
    return Result(f"{plural(len(ids), label)} {verb} in view at {t:.1f} s"
                  + (f" (frame {frame}): {where}." if ids else "."),
                  value=str(len(ids)), sql=sql, rows=rows, times=[t], instance_ids=ids)


# Sightings (a few a second) further apart than this leave a stretch with nobody in view.
_EMPTY_GAP = 1.0


def _empty_stretches(tables: VideoTables) -> Result:
    """When the place is empty: the stretches of more than _EMPTY_GAP seconds with no sighting
    of whoever is in it (`OCCUPANTS`), the start and end of the video included."""
    # Only the sightings next to a gap come back: a query's rows are capped.
    sql = (f"WITH s AS (SELECT DISTINCT d.t FROM detections d JOIN instances i ON i.id = "
           f"d.instance_id WHERE 1 = 1{category_sql(OCCUPANTS)}) SELECT t, next FROM (SELECT t, "
           f"LEAD(t) OVER (ORDER BY t) AS next, ROW_NUMBER() OVER (ORDER BY t) AS k FROM s) "
           f"WHERE k = 1 OR next IS NULL OR next - t > {_EMPTY_GAP} ORDER BY t")
    rows = tables.rows(sql)
    edges = [(0.0, rows[0]["t"]), *((r["t"], r["next"]) for r in rows if r["next"] is not None),
             (rows[-1]["t"], tables.duration)] if rows else [(0.0, tables.duration)]
    gaps = [(a, b) for a, b in edges if b - a > _EMPTY_GAP]
    if not gaps:
        return Result(f"No: someone or something that moves by itself is in view throughout (no "
                      f"gap of more than {_EMPTY_GAP:g} s between sightings).", value="no", sql=sql,
                      times=[r["t"] for r in rows[:1]])
    listed = ", ".join(f"{a:.1f}-{b:.1f} s" for a, b in gaps[:8])
    more = f" and {len(gaps) - 8} more" if len(gaps) > 8 else ""
    return Result(f"Yes: nobody and nothing that moves by itself is in view {listed}{more} "
                  f"({sum(b - a for a, b in gaps):.1f} s in all).", value="yes", sql=sql,
                  times=[a for a, _ in gaps][:20])


def _in_view_during(tables: VideoTables, target: Target, span: Span) -> Result:
    sql = (f"SELECT d.instance_id, i.category, MIN(d.t) AS first_t, MAX(d.t) AS last_t "
           f"FROM detections d JOIN instances i ON i.id = d.instance_id "
           f"WHERE d.t BETWEEN {span.start} AND {span.end}{instance_sql(target)} "
           f"GROUP BY d.instance_id ORDER BY first_t")
    rows = tables.rows(sql)
    ids = [r["instance_id"] for r in rows]
    spans = ", ".join(f"#{r['instance_id']} ({r['first_t']:.1f}-{r['last_t']:.1f} s)" for r in rows)
    text = f"Between {span.start:.1f} and {span.end:.1f} s, {plural(len(ids), target.label)} " \
           f"{'is' if len(ids) == 1 else 'are'} in view" + (f": {spans}." if ids else ".")
    return Result(text, value=str(len(ids)), sql=sql, rows=rows,
                  times=[r["first_t"] for r in rows] or [span.start], instance_ids=ids)


def most_at_once(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := unseen_target(tables, target):
        return unseen
    during = f" AND d.t BETWEEN {span.start} AND {span.end}" if span and not span.is_moment else ""
    sql = (f"SELECT d.frame, MIN(d.t) AS t, COUNT(DISTINCT d.instance_id) AS n, "
           f"GROUP_CONCAT(DISTINCT d.instance_id) AS ids FROM detections d "
           f"JOIN instances i ON i.id = d.instance_id WHERE 1 = 1{category_sql(target)}{during} "
           f"GROUP BY d.frame ORDER BY n DESC, t LIMIT 1")
    rows = tables.rows(sql)
    if not rows:
        return Result(f"No {target.label} is in view at any time.", value="0", sql=sql, rows=[])
    best = rows[0]
    ids = [int(i) for i in str(best["ids"]).split(",")]
    where = f" between {span.start:.1f} and {span.end:.1f} s" if during else ""
    return Result(f"At most {plural(best['n'], target.label)} {'is' if best['n'] == 1 else 'are'} "
                  f"in view at the same time{where}, first at {best['t']:.1f} s ({id_list(ids)}); "
                  f"never {best['n'] + 1} or more at once.",
                  value=str(best["n"]), sql=sql, rows=rows, times=[best["t"]], instance_ids=ids)


def count_distinct(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := unseen_target(tables, target):
        return unseen
    during = (f" AND i.last_seen >= {span.start} AND i.first_seen <= {span.end}"
              if span and not span.is_moment else "")
    if span and span.is_moment:
        return in_view(tables, target, span, words)
    sql = (f"SELECT i.id, i.category, i.first_seen, i.last_seen FROM instances i "
           f"WHERE 1 = 1{category_sql(target)}{during} ORDER BY i.first_seen")
    rows = tables.rows(sql)
    ids = [r["id"] for r in rows]
    spans = ", ".join(f"#{r['id']} ({r['first_seen']:.1f}-{r['last_seen']:.1f} s)" for r in rows[:12])
    where = f" between {span.start:.1f} and {span.end:.1f} s" if during else " in the video"
    return Result(f"{plural(len(ids), target.label)} {'appears' if len(ids) == 1 else 'appear'}"
                  f"{where}" + (f": {spans}." if ids else "."),
                  value=str(len(ids)), sql=sql, rows=rows,
                  times=[r["first_seen"] for r in rows], instance_ids=ids)


# What an appearance question asks: an arrival (first seen) or an exit (last seen), and the
# first or the last such moment among the kind's objects ("the last person to arrive").
_LEAVING = re.compile(r"\b(?:leav\w*|exit\w*|disappear\w*|(?:go|goes|walk|walks|step|steps|move|"
                      r"moves)\s+out|out of (?:sight|view|the (?:picture|frame|view)))\b", re.I)
_ARRIVING = re.compile(r"\b(?:appear\w*|arriv\w*|enter\w*|comes?\s+in(?:to)?|show\w*\s+up|"
                       r"seen for the first time)\b", re.I)
_ORDINAL = re.compile(r"\b(first|earliest|last|final|latest)\b")


def names_an_edge(question: str) -> bool:
    """Whether the question speaks of something arriving or leaving."""
    return bool(_LEAVING.search(question) or _ARRIVING.search(question))


def asked_edge(question: str, operation: str) -> tuple[str, str]:
    """('arrival' or 'exit', 'first' or 'last') as the question words it; the operation's own
    meaning (first appearance: the first arrival; last appearance: the last exit) where the
    question does not say. The first ordinal word counts: "the last person to arrive first
    appears" asks for the last arrival."""
    said = question.lower()
    default_first = operation == "first_appearance"
    event = ("exit" if _LEAVING.search(said) else "arrival" if _ARRIVING.search(said)
             else "arrival" if default_first else "exit")
    ordinal = _ORDINAL.search(said)
    if ordinal is None:
        return event, "first" if default_first else "last"
    return event, "first" if ordinal.group(1) in ("first", "earliest") else "last"


def _appearance_edge(event: str, ordinal: str, asked_who: bool = False):
    """The query for one edge; with `who` ("who comes in last"), its value is the one found,
    not the time."""
    column = "first_seen" if event == "arrival" else "last_seen"
    order = "ASC" if ordinal == "first" else "DESC"

    def edge(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
        if unseen := unseen_target(tables, target):
            return unseen
        where = ""
        if span and (event, ordinal) == ("arrival", "first"):
            # "the first person after 10 s": one still in view then or appearing later.
            where = f" AND i.last_seen >= {span.start}"
        if (event, ordinal) == ("exit", "first"):
            # Leaving is being gone before the video ends, not being in view at its last frame.
            where = " AND i.last_seen < (SELECT MAX(t) FROM detections)"
        sql, rows = instance_rows(tables, target, "i.id, i.category, i.first_seen, i.last_seen, "
                                   "i.appearance", f"i.{column} {order} LIMIT 1", where=where)
        if not rows and event == "exit" and ordinal == "first":
            return Result(f"No {target.label} leaves the view before the video ends.",
                          value="never", sql=sql, rows=[])
        if not rows:
            return none_appears(target, sql)
        r = rows[0]
        t = r[column]
        who = f"#{r['id']} ({r['appearance']})"
        text = (f"{who} first appears at {t:.1f} s (seen until {r['last_seen']:.1f} s)."
                if event == "arrival"
                else f"{who} is last seen at {t:.1f} s (first seen at {r['first_seen']:.1f} s).")
        if target.instance is None:
            which = {("arrival", "first"): "first", ("exit", "last"): "last",
                     ("arrival", "last"): "last", ("exit", "first"): "first"}[(event, ordinal)]
            to = {("arrival", "last"): " to arrive", ("exit", "first"): " to leave"}
            text = f"The {which} {target.label}{to.get((event, ordinal), '')}: " + text
        return Result(text, value=who if asked_who else f"{t:.1f} s", sql=sql, rows=rows,
                      times=[t], instance_ids=[r["id"]])

    return edge


# first_appearance and last_appearance are read from the question's words (`asked_edge`).
_OPERATIONS = {
    "in_view": in_view, "most_at_once": most_at_once, "count_distinct": count_distinct,
    "movement": movement, "position": position, "relation": relation, "appearance": appearance,
    "speech": speech, "screen_text": screen_text, "timeline": timeline, "kinds": kinds_seen,
    "held": held, "activity": activity,
}
