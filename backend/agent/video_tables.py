"""What a typed query reads and returns: the video's tables, what it asks about, its result.

`VideoTables` reads one video's SQLite tables through the read-only runner and says what ingest
could observe in it (the detector's categories, speech, on-screen text, scenes); `Target` is the
object or kind a query names, and the SQL that picks it out of the instances table (shared by
every query module); `Result` is what an operation found, with how well it is supported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from backend import kinds
from backend.agent import precision
from backend.agent.timephrases import Span
from backend.ingest import describe
from backend.sql_runner import QueryResult, run_query
from models.motion import CATEGORY as MOVING


# computed: a value code computed answers the input; read: the model must read the rows;
# proxy: about something else that may be what was asked (moving objects for cars); none:
# nothing matched; unobserved: ingest could not have seen it.
Support = Literal["computed", "read", "proxy", "none", "unobserved", "unsupported"]


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
    # The evidence as typed values, for options to be matched against (`option_match`).
    typed: dict | None = None


# Words for people that a person detector's single class covers.
_PERSON_WORDS = {"person", "people", "persons", "man", "men", "woman", "women", "child",
                 "children", "kid", "kids", "boy", "boys", "girl", "girls", "pedestrian",
                 "pedestrians", "human", "humans", "someone", "somebody", "anyone", "anybody",
                 "player", "players", "worker", "workers", "speaker", "individual", "individuals"}
_ANY_WORDS = {"", "object", "objects", "thing", "things", "anything", "something", "all", "any",
              "everything", "everyone", "item", "items", "instance", "instances", "it", "they"}
_ARTICLES = re.compile(r"^(?:the|a|an|any|all|each|every|some|first|last|different)\s+")
_INSTANCE = re.compile(r"(?:#|\b(?:id|instance|object|person|track|number|no\.?)\s*#?\s*)(\d+)\b", re.I)


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
    # 'lorries' are trucks, 'the fridge' a refrigerator: the detector's names for the kinds.
    if named := kinds.named(said):
        return Target(None, named[0], named[0])
    return Target(None, _singular(noun), _singular(noun))


def _singular(noun: str) -> str:
    for ending, replacement in (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"),
                                ("xes", "x"), ("ses", "s")):
        if noun.endswith(ending) and len(noun) > len(ending) + 1:
            return noun[: -len(ending)] + replacement
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") and len(noun) > 3 else noun


def quoted(text: str) -> str:
    """Text as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def plural(n: int, noun: str) -> str:
    """'1 bus', '0 buses', '3 people'."""
    return f"1 {noun}" if n == 1 else f"{n} {kinds.plural(noun)}"



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
        return sorted({"person", *self.tracked})

    @cached_property
    def tracked(self) -> set[str]:
        """The categories the tables hold instances of: what was found, not what could be."""
        return {r["category"] for r in self.rows("SELECT DISTINCT category FROM instances")}

    @property
    def detector(self) -> str:
        return self.video["models"].get("tracker", "the detector")

    def unseen_category(self, target: Target) -> str | None:
        """Why ingest could never have recorded this category, or None if it could."""
        if target.category is None or \
                any(k in self.categories for k in kinds.detected_as(target.category)):
            return None
        if target.category in kinds.COCO:
            objects = self.video["models"].get("objects") or "off"
            return (f"Everyday objects were not tracked when this video was ingested ({objects}), "
                    f"so no {target.label} is recorded in the tables. Run `python -m backend "
                    f"setup` (it fetches the COCO object detector), keep MEMORYREEL_OBJECTS "
                    f"on and ingest the video again.")
        return (f"Ingest cannot see any {target.label}: its detectors know only "
                f"{', '.join(self.categories)}, and {target.label} is none of the 80 COCO kinds "
                f"a detector here is trained on, so no {target.label} is recorded in the tables.")

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


# A question answered yes or no ("is the man left of the car", "does anyone sit", "can you see
# a dog"), or one choosing between alternatives in the same order ("is it red or blue").
YES_NO = re.compile(r"^\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would)\b",
                    re.I)
# "Who" asks after a person ("who comes in last"), whatever else it names.
WHO = re.compile(r"^\s*who\b", re.I)
# One tracked object a question names by its number ("person 7", "#3").
ONE = re.compile(r"(?:#|\b(?:person|man|woman|player|id|object|number)\s*#?\s*)(\d+)\b", re.I)
# A question asking how many ("how many cars", "the number of people"), not how often.
HOW_MANY = re.compile(r"\b(?:how many(?! times\b)|number of(?! times\b)|count)\b", re.I)


# ---- what a target names in the tables, for every query module ------------------------------

# Whoever is in a place asked to be empty: people and things that move by themselves.
OCCUPANTS = Target(None, None, "occupant")
_MOVERS = kinds.MOVING | {MOVING}


def id_list(ids: list[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def kinds_sql(kind: str) -> str:
    """The detector's kinds a kind is reported as, quoted for IN: 'car' or 'car', 'truck'."""
    return ", ".join(quoted(k) for k in kinds.detected_as(kind))


def category_sql(target: Target, alias: str = "i") -> str:
    """' AND <alias>.category IN (...)' for the target's kind, '' for any."""
    if target == OCCUPANTS:
        return f" AND {alias}.category IN ({', '.join(quoted(k) for k in sorted(_MOVERS))})"
    return f" AND {alias}.category IN ({kinds_sql(target.category)})" if target.category else ""


def instance_sql(target: Target, alias: str = "i") -> str:
    """The condition on the instances table (as `alias`) that picks the target out."""
    if target.instance is not None:
        return f" AND {alias}.id = {target.instance}"
    return category_sql(target, alias)


def _missing_instance(tables: VideoTables, target: Target) -> Result | None:
    if target.instance is None:
        return None
    found = tables.rows(f"SELECT COUNT(*) AS n FROM instances WHERE id = {target.instance}")[0]["n"]
    if found:
        return None
    total = tables.rows("SELECT COUNT(*) AS n FROM instances")[0]["n"]
    return Result(f"There is no object #{target.instance}: the tables hold #1 to #{total}."
                  if total else "No object was tracked in this video.", support="none")


def unseen_target(tables: VideoTables, target: Target) -> Result | None:
    """Why the target cannot be in the tables (a kind no detector names, an id no track has),
    or None."""
    reason = tables.unseen_category(target)
    return Result(reason, support="unobserved") if reason else _missing_instance(tables, target)


def instance_rows(tables: VideoTables, target: Target, columns: str, order: str,
                  where: str = "") -> tuple[str, list[dict]]:
    sql = (f"SELECT {columns} FROM instances i WHERE 1 = 1{instance_sql(target)}{where} "
           f"ORDER BY {order}")
    return sql, tables.rows(sql)


def none_appears(target: Target, sql: str) -> Result:
    return Result(f"No {target.label} appears in the video.", value="none", sql=sql, rows=[])
