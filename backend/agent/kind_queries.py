"""Which kinds of things a video shows: the typed queries behind "what kinds of vehicles pass",
"which of these appears" (`kinds_seen`) and "what is the woman carrying" (`held`).

It reads the instances table, whose categories are the person detector's and the COCO object
detector's (`backend/ingest/objects.py`), and says how many of each kind were tracked; moving
things no detector could name are counted apart, as things of no known kind. The value lists the
kinds seen, most tracked first, and `typed` holds them with their counts, so that code scores
each option against them (`option_match`).
"""

from __future__ import annotations

from collections import Counter

from backend import kinds
from backend.agent import activity_queries
from backend.agent.timephrases import Span
from backend.agent.video_tables import YES_NO, Result, Target, VideoTables, plural
from models import lexicon
from models.motion import CATEGORY as MOVING


def kinds_seen(tables: VideoTables, target: Target, span: Span | None, words: str) -> Result:
    during = ""
    if span is not None:
        during = f" WHERE last_seen >= {span.start} AND first_seen <= {span.end}"
    sql = (f"SELECT category, COUNT(*) AS n, MIN(first_seen) AS first FROM instances{during} "
           f"GROUP BY category ORDER BY n DESC")
    rows = tables.rows(sql)
    group = kinds.GROUP_WORDS.get(target.label or "")
    wanted = [r for r in rows if r["category"] != MOVING
              and (group is None or r["category"] in kinds.GROUPS[group])]
    unnamed = next((r["n"] for r in rows if r["category"] == MOVING), 0)
    where = f" between {span.start:.1f} and {span.end:.1f} s" if span is not None else ""
    seen = ", ".join(plural(r["n"], r["category"]) for r in wanted) or f"no {group or 'object'}"
    text = f"Kinds tracked{where}{f' ({group}s)' if group else ''}: {seen}."
    tracked = {r["category"] for r in wanted}
    tags, tagged_from = _tagged(tables, span, group) if group else ({}, {})
    missed = {k: t for k, t in tags.items() if k not in tracked}
    if missed:
        # Said next to what was tracked: a reader of the first lines must not take "no animal"
        # for the whole of what the video shows.
        text += (f" But the whole picture's tags (ImageNet classifier) show {group}s the "
                 f"detectors did not track: " + "; ".join(f"{kind} ({', '.join(said)})"
                                                           for kind, said in missed.items()) + ".")
    if unnamed:
        text += (f" Also {plural(unnamed, MOVING)} that no detector could name (a kind outside "
                 f"what they know, or one they missed).")
    known = [c for c in tables.categories if c != MOVING]
    text += f" The detectors can name {len(known)} kinds; anything else cannot be seen."
    # Unnamed moving things may be of kinds not listed; the tags name some for sure: the dog
    # is there whatever else the moving things are. Where neither the detectors nor the whole
    # picture's tags found any of the group, no tool holds more of it: the highway's "what
    # animal" searched seven calls to answer "no animal", so one reading answers, flagged low.
    support = "computed" if missed or (wanted and not unnamed) else "read"
    if group and not wanted and not missed and activity_queries.has(tables, "tags"):
        support = "unsupported"
        text += f" Neither the detectors nor the tags found any {group}: no tool can add to this."
    return Result(text, value=", ".join([r["category"] for r in wanted] + list(missed)),
                  sql=sql, rows=rows, support=support,
                  times=[r["first"] for r in wanted] + [tagged_from[k] for k in missed],
                  typed={"kinds": {r["category"]: r["n"] for r in wanted}, "group": group,
                         "unnamed": unnamed, "tagged": sorted(missed)})


def _tagged(tables: VideoTables, span: Span | None,
            group: str) -> tuple[dict[str, list[str]], dict[str, float]]:
    """({kind of the group: its tags}, {kind: when its first tag starts}) for the whole
    picture's ImageNet tags that are a kind of one of the group's kinds (a Doberman is a dog):
    what the picture shows of the group where the detector, trained on fewer and larger views,
    tracked none."""
    if not activity_queries.has(tables, "tags"):
        return {}, {}
    found: dict[str, list[str]] = {}
    first: dict[str, float] = {}
    for t in tables.rows(f"SELECT tag, wnid, MAX(score) AS score, MIN(t_start) AS first "
                         f"FROM tags WHERE score >= "
                         f"{activity_queries.TAG_FLOOR}{activity_queries.overlap(span)} "
                         f"GROUP BY tag ORDER BY score DESC LIMIT 20"):
        kind = next((k for k in kinds.GROUPS[group] if lexicon.tag_link(k, t["wnid"])), None)
        if kind:
            found.setdefault(kind, []).append(f"{t['tag']} {t['score']:.2f} from "
                                              f"{t['first']:.1f} s")
            first[kind] = min(first.get(kind, t["first"]), t["first"])
    return found, first


# An object whose centre lies inside a person's box on at least this share of the frames it is
# seen on goes with that person: held, carried, worn or sat on (boxes cannot tell which).
_WITH_PEOPLE = 0.5


def held(tables: VideoTables, target: Target, span: Span | None, words: str,
         question: str = "") -> Result:
    if "person" not in tables.tracked:
        return Result("No person was tracked in this video, so nothing was held by one.",
                      value="", support="none")
    during = f" AND d.t BETWEEN {span.start} AND {span.end}" if span is not None else ""
    # Every sighting of a thing with each person whose box holds its centre (NULL: nobody's).
    sql = f"""
        WITH pairs AS (
            SELECT d.instance_id AS thing, d.frame, d.t,
                   CASE WHEN (d.x1 + d.x2) / 2 BETWEEN p.x1 AND p.x2
                         AND (d.y1 + d.y2) / 2 BETWEEN p.y1 AND p.y2
                        THEN p.instance_id END AS person
            FROM detections d JOIN instances i ON i.id = d.instance_id
            LEFT JOIN detections p ON p.frame = d.frame
                 AND p.instance_id IN (SELECT id FROM instances WHERE category = 'person')
            WHERE i.category NOT IN ('person', '{MOVING}'){during}),
        shares AS (
            SELECT thing, AVG(inside) AS share FROM (
                SELECT thing, frame, MAX(person IS NOT NULL) AS inside FROM pairs
                GROUP BY thing, frame) GROUP BY thing)
        SELECT s.thing AS id, i.category, p.person, COUNT(*) AS frames, MIN(p.t) AS t0,
               MAX(p.t) AS t1
        FROM shares s JOIN instances i ON i.id = s.thing
        JOIN pairs p ON p.thing = s.thing AND p.person IS NOT NULL
        WHERE s.share >= {_WITH_PEOPLE} GROUP BY s.thing, p.person
        ORDER BY s.thing, frames DESC LIMIT 2000"""
    # Each thing goes with the person it was inside the box of most often.
    rows = list({r["id"]: r for r in reversed(tables.rows(sql))}.values())
    rows.sort(key=lambda r: r["t0"])
    if target.instance is not None:
        rows = [r for r in rows if r["person"] == target.instance]
    asked = [k for k in kinds.named(question) if k != "person"] if YES_NO.search(question) else []
    where = f" between {span.start:.1f} and {span.end:.1f} s" if span is not None else ""
    who = target.label if target.instance is not None else "a person"
    counted = Counter(r["category"] for r in rows)
    if not rows:
        # A value, as for any kind not seen: no other tool finds what is in a hand, and a
        # search for one took eight calls to say the same.
        result = Result(f"No object of a kind the detectors name was seen with {who}{where} "
                        f"(inside their box most of the time it was seen; the detector can "
                        f"miss small things in a hand).", value="none",
                        sql=sql, rows=rows, typed=_held_kinds({}))
    else:
        listed = "; ".join(f"{plural(n, kind)} ({_with_whom([r for r in rows if r['category'] == kind])})"
                           for kind, n in counted.most_common())
        result = Result(f"Seen with {who}{where} (inside their box most of the time: held, "
                        f"carried, worn or sat on): {listed}.",
                        value=", ".join(counted), sql=sql, rows=rows,
                        instance_ids=[r["id"] for r in rows], times=[r["t0"] for r in rows][:20],
                        typed=_held_kinds(counted))
    if YES_NO.search(question):
        _yes_or_no(result, rows, asked, who)
    return result


def _yes_or_no(result: Result, rows: list[dict], asked: list[str], who: str) -> None:
    """'Does anyone hold something?', 'is the man carrying a cup?': yes, with what and who,
    where such a thing was seen with someone; no where none was, which rests on what the
    detector found (it misses small things in hands), so it is never high."""
    seen = [r for r in rows if not asked or r["category"] in asked]
    what = f"no {' or '.join(asked)}" if asked else "nothing"
    if seen:
        result.text = f"Yes: {_with_whom(seen, named=True)}.\n{result.text}"
        result.value = "yes"
        result.typed = _held_kinds(Counter(r["category"] for r in seen))
    else:
        result.text = (f"No: {what} was seen with {who} (as the object detector finds "
                       f"things; it can miss small ones in a hand).\n{result.text}")
        result.value, result.typed = "no", _held_kinds({})
    result.support = "computed"


def _with_whom(rows: list[dict], named: bool = False, most: int = 4) -> str:
    """'#6 with #5 23.4-23.8 s, #7 with #5 43.6-44.2 s ...': each thing, who it was with, when."""
    said = ", ".join(f"{r['category'] + ' ' if named else ''}#{r['id']} with #{r['person']} "
                     f"{r['t0']:.1f}-{r['t1']:.1f} s" for r in rows[:most])
    return said + (" ..." if len(rows) > most else "")


def _held_kinds(counted: dict[str, int]) -> dict:
    return {"kinds": dict(counted), "group": None, "unnamed": 0}
