"""The picture itself, for the `scene` typed query: shots and cuts, camera motion, how much
moves, brightness and colours, at a time, over an interval or in the whole video, from the
shots and scenes tables ingest wrote (`backend/ingest/scenes.py`)."""

from __future__ import annotations

import re
from collections import Counter

from backend.agent import meaning
from backend.agent.timephrases import Span
from backend.agent.video_tables import YES_NO, Result, Support, VideoTables, plural
from backend.ingest.scenes import colour_names

_COLOUR_WORDS = "black|white|grey|gray|red|orange|brown|yellow|olive|green|teal|blue|navy|purple|pink"
_VALUE_WORDS = {"colour": set(_COLOUR_WORDS.split("|")), "brightness": {"dark", "dim", "bright", "light"}}
_SAME_AS = {"bright": {"light"}}
_STILL_WORDS = re.compile(r"\b(?:static|still|fixed|steady|stationary|calm|quiet)\b")
_MOVE_WORDS = re.compile(r"\b(?:mov(?:e|es|ed|ing)|pan\w*|tilt\w*|zoom\w*|turn\w*|shak\w*)\b")
# Values of the camera and motion columns that say nothing moved, or that it cannot be told.
_NO_MOTION = ("static", "still", "unknown")
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
    if aspect == "camera" and result.rows and "seconds" in result.rows[0]:
        # "Is the camera moving or still?": its seconds in each, for options to be scored by.
        moved = sum(r["seconds"] for r in result.rows if r["label"] not in _NO_MOTION)
        kept = sum(r["seconds"] for r in result.rows if r["label"] == "static")
        result.typed = {**(result.typed or {}), "motions": {"moving": round(moved, 1),
                                                            "still": round(kept, 1)},
                        "motions_of": "the camera's seconds"}
    if aspect and YES_NO.match(" ".join(question.lower().split())) and \
            len(meaning.motions(question)) < 2:  # "moving or still" asks which, not whether
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
        holds = any(v not in _NO_MOTION for v in seen)
        if _STILL_WORDS.search(said) and not _MOVE_WORDS.search(said):
            holds = not holds  # "is the camera static?"
    else:  # colour, brightness: the question names the value it expects
        expected = set(re.findall(r"[a-z]+", said)) & _VALUE_WORDS[aspect]
        if not expected:
            return
        holds = bool(expected & (set(re.findall(r"[a-z]+", value)) | _SAME_AS.get(value, set())))
    result.value = "yes" if holds else "no"
    result.text = f"{result.value.capitalize()}: {result.text}"
