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
would change it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, Field

from backend import describe
from backend.agent import precision
from backend.agent.timephrases import Span, resolve
from backend.errors import QueryError
from backend.scenes import colour_names
from backend.sql_runner import QueryResult, run_query
from models.motion import CATEGORY as MOVING

OPERATIONS: dict[str, str] = {
    "in_view": "the objects in view at a time or during an interval: their number and ids",
    "most_at_once": "the largest number of objects in view at the same moment, and when",
    "count_distinct": "how many different objects appear in the video or an interval",
    "first_appearance": "when an object, or the first of a kind, first appears",
    "last_appearance": "when an object, or the last of a kind, is last seen",
    "movement": "how an object, or the objects of a kind, move (direction across the frame)",
    "appearance": "what an object, or the objects of a kind, look like (colours)",
    "speech": "what is said at or near a time, during an interval, or when given words are said",
    "screen_text": "the text shown on screen at a time or in the whole video, and where it is",
    "timeline": "descriptions of what is seen between two times, or in the whole video",
    "scene": "the picture itself: shots and cuts, camera motion (static, pan, tilt, zoom), how "
             "much moves, brightness and colours, at a time, over an interval or the whole video",
    "sql": "none of these fits: write an SQL query instead",
}
Operation = Literal[tuple(OPERATIONS)]  # type: ignore[valid-type]

# computed: a value code computed answers the input; read: the model must read the rows;
# proxy: about something else that may be what was asked (moving objects for cars); none:
# nothing matched; unobserved: ingest could not have seen it.
Support = Literal["computed", "read", "proxy", "none", "unobserved"]


class TypedQuery(BaseModel):
    operation: Operation
    target: str = Field(max_length=40, description="'person', 'car', '#3', or '' for any object")
    time: str = Field(max_length=40, description="the time as the question says it ('at 10 s', "
                                                 "'1:10', 'the start', 'the end'), or ''")
    until: str = Field(max_length=40, description="the end of an interval, or ''")
    words: str = Field(max_length=60, description="words to find in speech or on-screen text, or ''")


@dataclass
class Result:
    """What an operation found: a plain statement, the computed value when there is one
    (a count, a time, an id, a quoted span), and how well it is supported."""

    text: str
    value: str = ""
    support: Support = "computed"
    sql: str = ""
    rows: list[dict] | None = None
    times: list[float] | None = None
    instance_ids: list[int] | None = None
    span: Span | None = None     # the time the query was resolved to, kept so memory can tell times apart
    conditions: str = ""         # a measurement's conditions (people's size, crowding): precision.py


# Words for people that a person detector's single class covers.
_PERSON_WORDS = {"person", "people", "persons", "man", "men", "woman", "women", "child",
                 "children", "kid", "kids", "boy", "boys", "girl", "girls", "pedestrian",
                 "pedestrians", "human", "humans", "someone", "somebody", "anyone", "anybody",
                 "player", "players", "worker", "workers", "speaker", "individual", "individuals"}
_ANY_WORDS = {"", "object", "objects", "thing", "things", "anything", "something", "all", "any",
              "everything", "everyone", "item", "items", "instance", "instances", "it", "they"}
_ARTICLES = re.compile(r"^(?:the|a|an|any|all|each|every|some|first|last|different)\s+")
_INSTANCE = re.compile(r"(?:#|\b(?:id|instance|object|person|track|number|no\.?)\s*#?\s*)(\d+)\b", re.I)
_PEOPLE_SEEN_NEAR = 0.6   # seconds: a detection this close to the asked time counts as "at" it
SPEECH_WINDOW = 1.5       # seconds either side of an asked time whose words are quoted


@dataclass(frozen=True)
class Target:
    instance: int | None
    category: str | None     # None: any category
    label: str               # as said, for sentences: 'person', 'car', '#3', 'object'


def parse_target(text: str) -> Target:
    """'#3' / 'person 3' -> instance 3; 'the people' -> person; 'cars' -> car; '' -> anything."""
    said = " ".join(text.lower().split())
    match = _INSTANCE.search(said) or re.fullmatch(r"(\d+)", said)
    if match:
        return Target(int(match.group(1)), None, f"#{match.group(1)}")
    while (stripped := _ARTICLES.sub("", said)) != said:
        said = stripped
    noun = said.split()[-1] if said.split() else ""
    if noun in _ANY_WORDS:
        return Target(None, None, "object")
    if noun in _PERSON_WORDS:
        return Target(None, "person", "person")
    return Target(None, _singular(noun), _singular(noun))


def _singular(noun: str) -> str:
    for ending, replacement in (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"),
                                ("xes", "x"), ("ses", "s")):
        if noun.endswith(ending) and len(noun) > len(ending) + 1:
            return noun[: -len(ending)] + replacement
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") and len(noun) > 3 else noun


def plural(n: int, noun: str) -> str:
    if n == 1:
        return f"1 {noun}"
    return f"{n} {'people' if noun == 'person' else noun if noun.endswith('s') else noun + 's'}"


def _ids(ids: list[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class VideoTables:
    """The video's tables, read through the read-only runner, and what ingest could observe."""

    def __init__(self, db_path, timeout_s: float = 2.0, max_rows: int = 200):
        self.db_path, self.timeout_s, self.max_rows = db_path, timeout_s, max_rows

    def query(self, sql: str) -> QueryResult:
        return run_query(self.db_path, sql, timeout_s=self.timeout_s, max_rows=self.max_rows)

    def rows(self, sql: str) -> list[dict]:
        return self.query(sql).as_dicts()

    @cached_property
    def video(self) -> dict:
        row = self.rows("SELECT duration, width, height, has_audio, models FROM video")[0]
        row["models"] = json.loads(row["models"] or "{}")
        return row

    @property
    def duration(self) -> float:
        return float(self.video["duration"] or 0.0)

    @cached_property
    def conditions(self) -> str:
        return precision.conditions(self)

    @cached_property
    def categories(self) -> list[str]:
        """The categories the detector could report (written at ingest; older libraries: the
        person detector's, plus whatever the tables hold)."""
        known = self.video["models"].get("categories")
        if known:
            return sorted(known)
        seen = [r["category"] for r in self.rows("SELECT DISTINCT category FROM instances")]
        return sorted({"person", *seen})

    @property
    def detector(self) -> str:
        return self.video["models"].get("tracker", "the detector")

    def unseen_category(self, target: Target) -> str | None:
        """Why the detector could never have reported this category, or None if it could."""
        if target.category is None or target.category in self.categories:
            return None
        return (f"Ingest cannot see any {target.label}: its detector ({self.detector}) "
                f"knows only {', '.join(self.categories)}, so no {target.label} is recorded in the "
                f"tables. Set MEMORYREEL_DETECTOR to ultralytics weights that include "
                f"{target.label} (e.g. yolo11n.pt, 80 COCO classes) and ingest the video again.")

    def no_speech(self) -> str | None:
        if not self.video["has_audio"]:
            return "The video has no audio track, so nothing said in it can be known."
        if not self.video["models"].get("speech"):
            return ("Speech recognition was off when this video was ingested; set "
                    "MEMORYREEL_ASR=1 and ingest it again.")
        return None

    def no_scenes(self) -> str | None:
        if not self.video["models"].get("scenes"):
            return ("Shots, camera motion and colours were not measured when this video was "
                    "ingested (an older version); delete it and ingest it again.")
        return None

    def no_ocr(self) -> str | None:
        if not self.video["models"].get("ocr"):
            return ("On-screen text was not read when this video was ingested; set "
                    "MEMORYREEL_OCR=1 and ingest it again.")
        return None

    def position(self, row: dict) -> str:
        """A pixel box's place on screen in words, as the timeline says it."""
        return describe.where(describe.TrackPoint(
            t=0.0, cx=(row["x1"] + row["x2"]) / 2 / max(1, self.video["width"]),
            cy=(row["y1"] + row["y2"]) / 2 / max(1, self.video["height"]), h=0.0))


def run(query: TypedQuery, question: str, tables: VideoTables) -> Result:
    """Resolve the query's arguments (code first reads the time phrase in the question itself),
    then compute; never an LLM call. Tables that refuse a query give a failed result."""
    span = None
    try:
        span = (resolve(question, tables.duration)
                or resolve(f"{query.time} to {query.until}" if query.until.strip() else query.time,
                           tables.duration, bare_number=True))
        result = _run(query, question, tables, span)
        if result.support == "computed" and query.operation in precision.MEASURED:
            result.conditions = tables.conditions
    except QueryError as e:
        result = Result(f"The tables refused the query: {e}", support="none")
    result.span = span
    return result


def _run(query: TypedQuery, question: str, tables: VideoTables, span: Span | None) -> Result:
    if query.operation == "scene":  # about the picture, not an object: no target
        return scene(tables, span, question, query.words)
    target = parse_target(query.target)
    operation = _OPERATIONS[query.operation]
    if query.operation in _OBJECT_OPERATIONS and (stand_in := _moving_stand_in(tables, target)):
        return _through_moving_objects(operation, tables, target, stand_in, span, query.words)
    result = operation(tables, target, span, query.words.strip())
    if query.operation in _COUNTS and result.support == "computed" and result.value.isdigit():
        _answer_yes_no(result, question, span, at_once=query.operation == "most_at_once")
    return result


_COUNTS = {"in_view", "most_at_once", "count_distinct"}
_OBJECT_OPERATIONS = _COUNTS | {"first_appearance", "last_appearance", "movement", "appearance"}


def _moving_stand_in(tables: VideoTables, target: Target) -> Target | None:
    """For a kind the detector cannot name (a car, when it knows only people), the moving
    objects background subtraction tracked, if it ran: they may be what the question means."""
    if tables.unseen_category(target) and MOVING in tables.categories:
        return Target(None, MOVING, MOVING)
    return None


def _through_moving_objects(operation, tables: VideoTables, target: Target, stand_in: Target,
                            span: Span | None, words: str) -> Result:
    """The operation over moving objects, said to be a stand-in: the model judges (support
    'proxy'), since a moving object may or may not be a {target}."""
    result = operation(tables, stand_in, span, words.strip())
    result.text = (f"Ingest does not recognise {plural(2, target.label).split(' ', 1)[1]} (its "
                   f"detector knows only {', '.join(c for c in tables.categories if c != MOVING)}), "
                   f"but it tracked things that moved and are not people, with their size, colour "
                   f"and path measured; they may be what the question means. " + result.text)
    if result.support in ("computed", "read"):
        result.support = "proxy"
    return result
_YES_NO = re.compile(r"^\s*(?:is|are|was|were|does|do|did|can|could|has|have|will|would)\b")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_AT_ONCE = re.compile(r"\b(?:ever|at once|at the same time|together|simultaneously)\b")


def asked_count(question: str, span: Span | None) -> tuple[str, int] | None:
    """The count a yes/no question asks about, as (comparison, n): 'is the hall deserted' ->
    ('==', 0); 'is anybody on the stairs' -> ('>=', 1); 'are 4 dogs ever together' -> ('>=', 4)
    with at_once; 'more than 3' -> ('>', 3). None for a question that is not yes/no about a
    count."""
    said = " ".join(question.lower().split())
    if not _YES_NO.match(said):
        return None
    if span:  # "at 12 seconds" is a time, not a count
        said = said.replace(span.phrase, " ")
    if re.search(r"\b(?:empty|nobody|no one|no-one|deserted|vacant|no (?:people|person|one|objects?))\b", said):
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
    if re.search(r"\b(?:any|anyone|anybody|someone|somebody|anything|something)\b", said):
        return (">=", 1)
    return None


def _answer_yes_no(result: Result, question: str, span: Span | None, at_once: bool) -> None:
    """A yes/no question about a count is answered by comparing, in code: small models read
    'never N or more at once' as yes to 'are N of them ever in view together'."""
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
    result.text += f" The question asks about {wanted}; the count is {count}, so: {result.value}."


def _category_sql(target: Target) -> str:
    return f" AND i.category = {_quoted(target.category)}" if target.category else ""


def _instance_sql(target: Target) -> str:
    if target.instance is not None:
        return f" AND i.id = {target.instance}"
    return _category_sql(target)


def _missing_instance(tables: VideoTables, target: Target) -> Result | None:
    if target.instance is None:
        return None
    found = tables.rows(f"SELECT COUNT(*) AS n FROM instances WHERE id = {target.instance}")[0]["n"]
    if found:
        return None
    total = tables.rows("SELECT COUNT(*) AS n FROM instances")[0]["n"]
    return Result(f"There is no object #{target.instance}: the tables hold #1 to #{total}."
                  if total else "No object was tracked in this video.", support="none")


def _unseen(tables: VideoTables, target: Target) -> Result | None:
    reason = tables.unseen_category(target)
    return Result(reason, support="unobserved") if reason else _missing_instance(tables, target)


def in_view(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := _unseen(tables, target):
        return unseen
    if span is None:
        return most_at_once(tables, target, None, words)
    if not span.is_moment:
        return _in_view_during(tables, target, span)
    nearest = tables.rows(f"SELECT frame, t FROM detections ORDER BY ABS(t - {span.start}) LIMIT 1")
    label = target.label
    if not nearest or abs(nearest[0]["t"] - span.start) > _PEOPLE_SEEN_NEAR:
        sql = f"SELECT frame, t FROM detections ORDER BY ABS(t - {span.start}) LIMIT 1"
        return Result(f"Nothing is in view at {span}: 0 {plural(2, label).split(' ', 1)[1]} (no "
                      f"detection within {_PEOPLE_SEEN_NEAR} s of it), so the scene is empty.",
                      value="0", sql=sql, times=[span.start], instance_ids=[])
    frame, t = nearest[0]["frame"], nearest[0]["t"]
    sql = (f"SELECT d.instance_id, i.category, d.t, d.x1, d.y1, d.x2, d.y2 FROM detections d "
           f"JOIN instances i ON i.id = d.instance_id WHERE d.frame = {frame}{_instance_sql(target)} "
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


def _in_view_during(tables: VideoTables, target: Target, span: Span) -> Result:
    sql = (f"SELECT d.instance_id, i.category, MIN(d.t) AS first_t, MAX(d.t) AS last_t "
           f"FROM detections d JOIN instances i ON i.id = d.instance_id "
           f"WHERE d.t BETWEEN {span.start} AND {span.end}{_instance_sql(target)} "
           f"GROUP BY d.instance_id ORDER BY first_t")
    rows = tables.rows(sql)
    ids = [r["instance_id"] for r in rows]
    spans = ", ".join(f"#{r['instance_id']} ({r['first_t']:.1f}-{r['last_t']:.1f} s)" for r in rows)
    text = f"Between {span.start:.1f} and {span.end:.1f} s, {plural(len(ids), target.label)} " \
           f"{'is' if len(ids) == 1 else 'are'} in view" + (f": {spans}." if ids else ".")
    return Result(text, value=str(len(ids)), sql=sql, rows=rows,
                  times=[r["first_t"] for r in rows] or [span.start], instance_ids=ids)


def most_at_once(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := _unseen(tables, target):
        return unseen
    during = f" AND d.t BETWEEN {span.start} AND {span.end}" if span and not span.is_moment else ""
    sql = (f"SELECT d.frame, MIN(d.t) AS t, COUNT(DISTINCT d.instance_id) AS n, "
           f"GROUP_CONCAT(DISTINCT d.instance_id) AS ids FROM detections d "
           f"JOIN instances i ON i.id = d.instance_id WHERE 1 = 1{_category_sql(target)}{during} "
           f"GROUP BY d.frame ORDER BY n DESC, t LIMIT 1")
    rows = tables.rows(sql)
    if not rows:
        return Result(f"No {target.label} is in view at any time.", value="0", sql=sql, rows=[])
    best = rows[0]
    ids = [int(i) for i in str(best["ids"]).split(",")]
    where = f" between {span.start:.1f} and {span.end:.1f} s" if during else ""
    return Result(f"At most {plural(best['n'], target.label)} {'is' if best['n'] == 1 else 'are'} "
                  f"in view at the same time{where}, first at {best['t']:.1f} s ({_ids(ids)}); "
                  f"never {best['n'] + 1} or more at once.",
                  value=str(best["n"]), sql=sql, rows=rows, times=[best["t"]], instance_ids=ids)


def count_distinct(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := _unseen(tables, target):
        return unseen
    during = (f" AND i.last_seen >= {span.start} AND i.first_seen <= {span.end}"
              if span and not span.is_moment else "")
    if span and span.is_moment:
        return in_view(tables, target, span, words)
    sql = (f"SELECT i.id, i.category, i.first_seen, i.last_seen FROM instances i "
           f"WHERE 1 = 1{_category_sql(target)}{during} ORDER BY i.first_seen")
    rows = tables.rows(sql)
    ids = [r["id"] for r in rows]
    spans = ", ".join(f"#{r['id']} ({r['first_seen']:.1f}-{r['last_seen']:.1f} s)" for r in rows[:12])
    where = f" between {span.start:.1f} and {span.end:.1f} s" if during else " in the video"
    return Result(f"{plural(len(ids), target.label)} {'appears' if len(ids) == 1 else 'appear'}"
                  f"{where}" + (f": {spans}." if ids else "."),
                  value=str(len(ids)), sql=sql, rows=rows,
                  times=[r["first_seen"] for r in rows], instance_ids=ids)


def _appearance_edge(first: bool):
    column, order = ("first_seen", "ASC") if first else ("last_seen", "DESC")

    def edge(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
        if unseen := _unseen(tables, target):
            return unseen
        # "the first person after 10 s": one still in view then or appearing later.
        after = f" AND i.last_seen >= {span.start}" if span and first else ""
        sql, rows = _instance_rows(tables, target, "i.id, i.category, i.first_seen, i.last_seen, "
                                   "i.appearance", f"i.{column} {order} LIMIT 1", where=after)
        if not rows:
            return _none_appears(target, sql)
        r = rows[0]
        t = r[column]
        who = f"#{r['id']} ({r['appearance']})"
        text = (f"{who} first appears at {t:.1f} s (seen until {r['last_seen']:.1f} s)." if first
                else f"{who} is last seen at {t:.1f} s (first seen at {r['first_seen']:.1f} s).")
        if target.instance is None:
            text = f"The {'first' if first else 'last'} {target.label}: " + text
        return Result(text, value=f"{t:.1f} s", sql=sql, rows=rows, times=[t],
                      instance_ids=[r["id"]])

    return edge


def movement(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := _unseen(tables, target):
        return unseen
    sql, rows = _instance_rows(tables, target, "i.id, i.category, i.action, i.first_seen, "
                                               "i.last_seen", "i.id")
    if not rows:
        return _none_appears(target, sql)
    if target.instance is not None:
        r = rows[0]
        path = _path(tables, r["id"])
        return Result(f"#{r['id']} {r['action']}{path} ({r['first_seen']:.1f}-{r['last_seen']:.1f} s).",
                      value=" and ".join(describe.directions(r["action"])), sql=sql, rows=rows,
                      times=[r["first_seen"]], instance_ids=[r["id"]])
    tally: dict[str, list[int]] = {}
    for r in rows:
        for direction in describe.directions(r["action"]):
            tally.setdefault(direction, []).append(r["id"])
    ranked = sorted(tally.items(), key=lambda kv: -len(kv[1]))
    parts = "; ".join(f"{len(ids)} {d} ({_ids(ids[:8])})" for d, ids in ranked)
    most = ranked[0]
    leading = [d for d, ids in ranked if len(ids) == len(most[1])]
    value = most[0] if len(leading) == 1 else ""
    summary = f"most: {value}" if value else "no single direction leads"
    return Result(f"Of {plural(len(rows), target.label)}, by direction: {parts}. ({summary})",
                  value=value, sql=sql, rows=rows, times=[r["first_seen"] for r in rows],
                  instance_ids=[r["id"] for r in rows])


def _instance_rows(tables: VideoTables, target: Target, columns: str, order: str,
                   where: str = "") -> tuple[str, list[dict]]:
    sql = (f"SELECT {columns} FROM instances i WHERE 1 = 1{_instance_sql(target)}{where} "
           f"ORDER BY {order}")
    return sql, tables.rows(sql)


def _none_appears(target: Target, sql: str) -> Result:
    return Result(f"No {target.label} appears in the video.", value="none", sql=sql, rows=[])


def _path(tables: VideoTables, instance_id: int) -> str:
    ends = tables.rows(f"SELECT t, x1, y1, x2, y2 FROM detections WHERE instance_id = {instance_id} "
                       f"AND (t = (SELECT MIN(t) FROM detections WHERE instance_id = {instance_id}) "
                       f"OR t = (SELECT MAX(t) FROM detections WHERE instance_id = {instance_id})) "
                       f"ORDER BY t")
    if len(ends) < 2:
        return ""
    return f", from the {tables.position(ends[0])} to the {tables.position(ends[-1])}"


def appearance(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if unseen := _unseen(tables, target):
        return unseen
    sql, rows = _instance_rows(tables, target, "i.id, i.category, i.appearance, i.first_seen",
                               "i.first_seen LIMIT 20")
    if not rows:
        return _none_appears(target, sql)
    listed = "; ".join(f"#{r['id']}: {r['appearance']}" for r in rows)
    value = rows[0]["appearance"] if len(rows) == 1 else ""
    return Result(f"Colours measured from the boxes: {listed}.", value=value, sql=sql, rows=rows,
                  times=[r["first_seen"] for r in rows], instance_ids=[r["id"] for r in rows],
                  support="computed" if value else "read")


def speech(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if reason := tables.no_speech():
        return Result(reason, support="unobserved")
    if words and not (span and span.is_moment):
        return _said_where(tables, words)
    if span and span.is_moment:
        return _said_at(tables, span)
    bounds = f" WHERE t_end >= {span.start} AND t_start <= {span.end}" if span else ""
    sql = f"SELECT t_start, t_end, text FROM speech{bounds} ORDER BY t_start LIMIT 12"
    rows = tables.rows(sql)
    if not rows:
        return Result("Nothing is said" + (f" between {span.start:.1f} and {span.end:.1f} s." if span
                                           else " in the video."), value="", sql=sql, rows=[])
    quoted = " ".join(f'[{r["t_start"]:.1f} s] "{r["text"].strip()}"' for r in rows)
    return Result(f"Said: {quoted}", value=" ".join(r["text"].strip() for r in rows) if span else "",
                  sql=sql, rows=rows, times=[r["t_start"] for r in rows],
                  support="computed" if span else "read")


def _said_at(tables: VideoTables, span: Span) -> Result:
    t = span.start
    sql = (f"SELECT w.t_start, w.t_end, w.word, s.text FROM speech_words w "
           f"JOIN speech s ON s.id = w.segment_id WHERE w.t_end >= {t - SPEECH_WINDOW} "
           f"AND w.t_start <= {t + SPEECH_WINDOW} ORDER BY w.t_start")
    rows = tables.rows(sql)
    if not rows:
        return Result(f"Nothing is said within {SPEECH_WINDOW} s of {t:.1f} s.", value="",
                      sql=sql, rows=[], times=[t])
    nearest = min(rows, key=lambda r: 0 if r["t_start"] <= t <= r["t_end"]
                  else min(abs(r["t_start"] - t), abs(r["t_end"] - t)))
    word = re.sub(r"[^\w'-]", "", nearest["word"])
    around = " ".join(r["word"].strip() for r in rows)
    return Result(f'At {t:.1f} s the word said is "{word}" ({nearest["t_start"]:.1f}-'
                  f'{nearest["t_end"]:.1f} s); words around it: "{around}". Sentence: '
                  f'"{nearest["text"].strip()}"', value=word, sql=sql, rows=rows,
                  times=[nearest["t_start"]])


def _said_where(tables: VideoTables, words: str) -> Result:
    if len(words.split()) == 1:  # one word: its own time, not its sentence's start
        sql = (f"SELECT w.t_start, w.t_end, s.text FROM speech_words w JOIN speech s ON "
               f"s.id = w.segment_id WHERE w.word LIKE {_quoted('%' + words + '%')} "
               f"ORDER BY w.t_start LIMIT 10")
    else:
        sql = (f"SELECT t_start, t_end, text FROM speech WHERE text LIKE "
               f"{_quoted('%' + words + '%')} ORDER BY t_start LIMIT 10")
    rows = tables.rows(sql)
    if not rows:
        return Result(f'"{words}" is never said (no transcribed speech contains it).', value="never",
                      sql=sql, rows=[])
    listed = "; ".join(f'{r["t_start"]:.1f} s: "{r["text"].strip()}"' for r in rows)
    return Result(f'"{words}" is said at {listed}', value=f"{rows[0]['t_start']:.1f} s", sql=sql,
                  rows=rows, times=[r["t_start"] for r in rows])


def screen_text(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if reason := tables.no_ocr():
        return Result(reason, support="unobserved")
    if span and span.is_moment:
        when = (f"t = (SELECT COALESCE((SELECT MAX(t) FROM ocr WHERE t <= {span.start + 0.5}), "
                f"(SELECT MIN(t) FROM ocr)))")
    elif span:
        when = f"t BETWEEN {span.start} AND {span.end}"
    else:
        when = "1 = 1"
    if words:
        when += f" AND text LIKE {_quoted('%' + words + '%')}"
    sql = (f"SELECT text, MIN(t) AS t, MAX(t) AS until, COUNT(*) AS reads, AVG(x1) AS x1, "
           f"AVG(y1) AS y1, AVG(x2) AS x2, AVG(y2) AS y2 FROM ocr WHERE {when} "
           f"GROUP BY text ORDER BY reads DESC, t LIMIT 40")
    rows = tables.rows(sql)
    if not rows and words:
        # Words a model picked to stand for the text ("sign", "caption") rarely match the text
        # as written: show what was read instead of nothing.
        # Not said in the text: "No text contains 'date'" made the 1.5B answer "no date is
        # shown" over a screen full of dates.
        found = screen_text(tables, target, span, "")
        found.support, found.value = "read", ""
        return found
    if not rows:
        where = f" at {span}" if span else ""
        return Result(f"No on-screen text was read{where}.", value="none", sql=sql, rows=[])
    for r in rows:
        r["position"] = tables.position(r)
    regions = Counter()
    for r in rows:
        regions[r["position"]] += r["reads"]
    shown = "; ".join(f'"{r["text"]}" at the {r["position"]} ({r["t"]:.1f}'
                      + (f'-{r["until"]:.1f}' if r["until"] > r["t"] else "") + " s)"
                      for r in rows[:10])
    more = f" (10 most read of {len(rows)}{'+' if len(rows) == 40 else ''} texts)" if len(rows) > 10 else ""
    place = ", ".join(f"{region} ({n} reads)" for region, n in regions.most_common(3))
    top_region, top_reads = regions.most_common(1)[0]
    if len(rows) == 1:
        value = rows[0]["text"]
    elif top_reads >= 0.8 * sum(regions.values()):
        value = top_region
    else:
        value = ""
    return Result(f"On-screen text{more}: {shown}. Where on screen: {place}.", value=value, sql=sql,
                  rows=rows, times=sorted({r["t"] for r in rows})[:10],
                  support="computed" if value else "read")


def timeline(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    if span:
        margin = 1.0 if span.is_moment else 0.0
        bounds = f" WHERE t_end >= {span.start - margin} AND t_start <= {span.end + margin}"
    else:
        bounds = ""
    sql = f"SELECT t_start, t_end, description FROM timeline{bounds} ORDER BY t_start LIMIT 12"
    rows = tables.rows(sql)
    if not rows:
        return Result("No description covers that time.", sql=sql, rows=[], support="none")
    listed = "\n".join(f"[{r['t_start']:.1f}-{r['t_end']:.1f} s] {r['description']}" for r in rows)
    return Result(listed, sql=sql, rows=rows, times=[r["t_start"] for r in rows], support="read")


_COLOUR_WORDS = "black|white|grey|gray|red|orange|brown|yellow|olive|green|teal|blue|navy|purple|pink"
_VALUE_WORDS = {"colour": set(_COLOUR_WORDS.split("|")), "brightness": {"dark", "dim", "bright", "light"}}
_SAME_AS = {"bright": {"light"}}
_STILL_WORDS = re.compile(r"\b(?:static|still|fixed|steady|stationary|calm|quiet)\b")
_MOVE_WORDS = re.compile(r"\b(?:mov(?:e|es|ed|ing)|pan\w*|tilt\w*|zoom\w*|turn\w*|shak\w*)\b")
_CAMERA_WORDS = {"static": "static camera",
                 "unknown": "camera motion unknown (too little texture to tell)"}
# Sides of the picture a question can ask about, each with the words that name it; the first
# named one wins ("is the camera moving" is about the camera, not about movement).
_ASPECTS = (
    ("cut", r"cuts?|shots?|scene changes?|changes? of scene|transitions?|edits?|edited"),
    ("camera", r"camera|pans?|panning|panned|tilts?|tilting|zoom(?:s|ing|ed)?"),
    ("colour", r"colou?rs?|colou?red|hues?|" + _COLOUR_WORDS),
    ("brightness", r"bright|brightness|dark|darker|dim|lit|lighting|light"),
    ("motion", r"moving|moves?|movement|motion|still|busy|calm|activity"),
)
_SCENE_COLUMNS = "id, t_start, t_end, shot_id, cut_at, camera, motion, moving_share, brightness, luma, colours"
_CUT_NEAR = 1.0  # seconds: a cut this close to an asked moment is "at" it


def _aspect(text: str) -> str:
    said = text.lower()
    return next((name for name, pattern in _ASPECTS if re.search(rf"\b(?:{pattern})\b", said)), "")


def scene(tables: VideoTables, span: Span | None, question: str, words: str) -> Result:
    """The picture at a time, over an interval or in the whole video, from the shots and scenes
    tables. The value is the side the question asks about (a cut's time, the camera's motion,
    colours, brightness, motion level), or yes/no for a yes/no question about it."""
    if reason := tables.no_scenes():
        return Result(reason, support="unobserved")
    aspect = _aspect(f"{words} {question}")
    facts = (_scene_at(tables, span.start) if span and span.is_moment
             else _scenes_over(tables, span, question))
    result = facts.pop(aspect or "all")
    if aspect and _YES_NO.match(" ".join(question.lower().split())):
        _scene_yes_no(result, aspect, question)
    return result


def _scene_at(tables: VideoTables, t: float) -> dict[str, Result]:
    sql = f"SELECT {_SCENE_COLUMNS} FROM scenes WHERE t_start <= {t} ORDER BY t_start DESC LIMIT 1"
    rows = tables.rows(sql)
    if not rows:
        return dict.fromkeys(("all", *dict(_ASPECTS)), Result("No scene covers that time.", sql=sql,
                                                               support="none"))
    r = rows[0]
    shots = tables.rows("SELECT id, t_start, t_end FROM shots ORDER BY id")
    shot = next(s for s in shots if s["id"] == r["shot_id"])
    near = [s["t_start"] for s in shots[1:] if abs(s["t_start"] - t) <= _CUT_NEAR]
    cut = (f"a cut at {near[0]:.1f} s" if near else f"no cut within {_CUT_NEAR:.0f} s")
    camera = _CAMERA_WORDS.get(r["camera"], f"the camera {_verb(r['camera'])}")
    motion = f"{r['motion']} motion ({r['moving_share']:.0%} of the picture moves apart from the camera)"
    light = f"{r['brightness']} (mean grey level {r['luma']:.0f} of 255)"
    text = (f"At {t:.1f} s (step {r['t_start']:.1f}-{r['t_end']:.1f} s, shot {shot['id']} of "
            f"{len(shots)}: {shot['t_start']:.1f}-{shot['t_end']:.1f} s): {cut}; {camera}; "
            f"{motion}; {light}; colours: {r['colours'] or 'none measured'}.")

    def said(value: str, support: Support = "computed") -> Result:
        return Result(text, value=value, sql=sql, rows=rows, times=[t], support=support)
    return {"all": said("", "read"), "cut": said(f"{near[0]:.1f} s" if near else "none"),
            "camera": said(r["camera"], "none" if r["camera"] == "unknown" else "computed"),
            "colour": said(", ".join(colour_names(r["colours"] or ""))),
            "brightness": said(r["brightness"]), "motion": said(r["motion"])}


def _scenes_over(tables: VideoTables, span: Span | None, question: str) -> dict[str, Result]:
    within = f" WHERE t_end > {span.start} AND t_start < {span.end}" if span else ""
    where = f"between {span.start:.1f} and {span.end:.1f} s" if span else "in the video"
    shots_sql = (f"SELECT id, t_start, t_end FROM shots{within} ORDER BY id")
    shots = tables.rows(shots_sql)
    cuts = [s["t_start"] for s in shots if s["id"] > 1 and (span is None or s["t_start"] > span.start)]
    listed = ", ".join(f"{c:.1f} s" for c in cuts[:12]) + (" ..." if len(cuts) > 12 else "")
    cut_text = ((f"{plural(len(cuts), 'cut')} {where}, at {listed}" if cuts else f"No cut {where}")
                + f" ({plural(len(shots), 'shot')}).")
    value = listed or "none"
    if re.search(r"\bhow many\b", question.lower()):
        value = str(len(shots) if re.search(r"\bshots?\b", question.lower()) else len(cuts))
    parts = {"cut": Result(cut_text, value=value, sql=shots_sql, rows=shots,
                           times=cuts[:12] or [span.start if span else 0.0])}
    for aspect, column in (("camera", "camera"), ("motion", "motion"), ("brightness", "brightness")):
        parts[aspect] = _share_of_time(tables, column, within, where)
    parts["colour"] = _colours_over(tables, within, where)
    parts["all"] = Result(" ".join(p.text for p in parts.values()), sql=shots_sql, rows=shots,
                          times=parts["cut"].times, support="read")
    return parts


def _share_of_time(tables: VideoTables, column: str, within: str, where: str) -> Result:
    """How long each value of a scenes column lasts, longest first; the value is the longest."""
    sql = (f"SELECT {column} AS label, SUM(t_end - t_start) AS seconds, MIN(t_start) AS first_t, "
           f"MAX(t_end) AS last_t FROM scenes{within} GROUP BY {column} ORDER BY seconds DESC")
    rows = tables.rows(sql)
    if not rows:
        return Result(f"No scene was measured {where}.", value="none", sql=sql, rows=[], support="none")
    known = [r for r in rows if r["label"] != "unknown"]
    name = {"camera": "Camera", "motion": "Motion", "brightness": "Brightness"}[column]
    listed = "; ".join(f"{r['label']} for {r['seconds']:.1f} s ({r['first_t']:.1f}-{r['last_t']:.1f} s)"
                       for r in rows)
    return Result(f"{name} {where}: {listed}.", value=known[0]["label"] if known else "unknown",
                  sql=sql, rows=rows, times=[r["first_t"] for r in rows],
                  support="computed" if known else "none")


def _colours_over(tables: VideoTables, within: str, where: str) -> Result:
    # Evenly spread steps, so that a long video is not judged by its first minutes.
    total = tables.rows(f"SELECT COUNT(*) AS n FROM scenes{within}")[0]["n"]
    every = max(1, -(-total // tables.max_rows))
    sql = (f"SELECT t_start, colours FROM scenes{within}{' AND' if within else ' WHERE'} "
           f"id % {every} = 0 ORDER BY t_start")
    rows = tables.rows(sql)
    shares: Counter = Counter()
    for r in rows:
        for part in (r["colours"] or "").split(", "):
            if part:
                name, percent = part.rsplit(" ", 1)
                shares[name] += float(percent.rstrip("%")) / len(rows)
    listed = ", ".join(f"{name} {share:.0f}%" for name, share in shares.most_common(4))
    return Result(f"Colours filling the picture {where}: {listed or 'none measured'}.",
                  value=", ".join(name for name, _ in shares.most_common(2)), sql=sql, rows=rows,
                  times=[rows[0]["t_start"]] if rows else [], support="computed" if rows else "none")


def _verb(camera: str) -> str:
    """'pan left' -> 'pans left'."""
    move, _, way = camera.partition(" ")
    return f"{move}s {way}".strip()


def _scene_yes_no(result: Result, aspect: str, question: str) -> None:
    """Yes or no, by code, for a yes/no question about the picture: is there a cut, is the
    camera moving (or panning, zooming, static), is anything moving, is it dark, is it green."""
    if result.support != "computed" or not result.value:
        return
    said = " ".join(question.lower().replace("gray", "grey").split())
    value = result.value.lower()
    if aspect == "cut":
        holds = value != "none"
    elif aspect == "camera" and (asked := re.search(r"\b(pan|tilt|zoom)", said)):
        holds = value.startswith(asked.group(1))
    elif aspect in ("camera", "motion"):
        # Over an interval, the camera moves if it moves in any part of it.
        seen = {r["label"] for r in result.rows or [] if "label" in r} or {value}
        holds = any(v not in ("static", "still", "unknown") for v in seen)
        if _STILL_WORDS.search(said) and not _MOVE_WORDS.search(said):
            holds = not holds  # "is the camera static?"
    else:  # colour, brightness: the question names the value it expects
        expected = set(re.findall(r"[a-z]+", said)) & _VALUE_WORDS[aspect]
        if not expected:
            return
        holds = bool(expected & (set(re.findall(r"[a-z]+", value)) | _SAME_AS.get(value, set())))
    result.value = "yes" if holds else "no"
    result.text += f" So, to the question: {result.value}."


_OPERATIONS = {
    "in_view": in_view, "most_at_once": most_at_once, "count_distinct": count_distinct,
    "first_appearance": _appearance_edge(first=True), "last_appearance": _appearance_edge(first=False),
    "movement": movement, "appearance": appearance, "speech": speech, "screen_text": screen_text,
    "timeline": timeline,
}
