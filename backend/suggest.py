"""Suggested questions for one video, from what ingest found in it.

A fixed list of questions about people misleads on a clip with none. Here each kind of evidence
the video's tables hold (people, what they do, what is happening, other tracked kinds, moving
objects, speech, on-screen text, shots, captions) fills a generic template with a value of its
own (a time at which something is said, a kind that was tracked), so every suggestion has
evidence to answer it and a clip never suggests a question about something ingest did not find.
"""

from __future__ import annotations

import json
from pathlib import Path

from backend import kinds
from backend.agent.text_queries import SPEECH_WINDOW
from backend.errors import QueryError
from backend.schema import TABLES
from backend.sql_runner import run_query
from models.motion import CATEGORY as MOVING

_LIMIT = 4
# A window's activity this probable is the classifier's sure reading (a campus walk read as
# "busking" at 0.41 is not one to offer).
_SURE_ACTIVITY = 0.5


def suggest(db_path: Path, limit: int = _LIMIT) -> list[str]:
    """Up to `limit` questions, one per kind of evidence first (most telling kinds first)."""
    found = [q for template in _TEMPLATES if (q := template(db_path))]
    return found[:limit] or ["what happens in the video"]


def _rows(db_path: Path, sql: str) -> list[dict]:
    return run_query(db_path, sql, timeout_s=2.0, max_rows=50).as_dicts()


def _at(t: float) -> str:
    """A time as the agent's time phrases read it: 'at 12 seconds', 'at 1:05'."""
    t = max(0.0, float(t))
    if t < 60:
        return f"at {t:.0f} seconds" if t == round(t) else f"at {t:.1f} seconds"
    return f"at {int(t // 60)}:{int(t % 60):02d}"


def _speech(db_path: Path) -> str | None:
    """A time at which words are said: the middle of the word with the most words within the
    window the agent quotes for "what is said at T" (a run of speech, not a cough).

    Word times, not segment times: a segment spans the pauses inside it, and where Whisper
    starts and ends one differs between CPUs, so a segment's midpoint can be silence.
    """
    mid = "(t_start + t_end) / 2"
    rows = _rows(db_path, f"SELECT {mid} AS t, COUNT(*) OVER (ORDER BY {mid} RANGE BETWEEN "
                          f"{SPEECH_WINDOW} PRECEDING AND {SPEECH_WINDOW} FOLLOWING) AS n "
                          f"FROM speech_words ORDER BY n DESC, t LIMIT 1")
    return f"what is said {_at(rows[0]['t'])}" if rows else None


def _text(db_path: Path) -> str | None:
    rows = _rows(db_path, "SELECT MIN(t) AS t FROM ocr GROUP BY text ORDER BY COUNT(*) DESC LIMIT 1")
    return f"what text is shown on screen {_at(rows[0]['t'])}" if rows else None


def _action(db_path: Path) -> str | None:
    """What a person does, at the middle of the action ingest is surest of (longest on a tie)."""
    try:
        rows = _rows(db_path, "SELECT a.instance_id AS id, a.t_start, a.t_end FROM actions a "
                              "JOIN instances i ON i.id = a.instance_id WHERE i.category = "
                              "'person' ORDER BY a.score DESC, a.t_end - a.t_start DESC LIMIT 1")
    except QueryError:
        return None  # ingested before there was an actions table
    if not rows:
        return None
    middle = round((rows[0]["t_start"] + rows[0]["t_end"]) / 2, 1)
    return f"what is person {rows[0]['id']} doing {_at(middle)}"


def _happening(db_path: Path) -> str | None:
    """Where the video classifier is sure of an activity somewhere: what happens, which the
    answer tells from it and from who does what when."""
    try:
        rows = _rows(db_path, f"SELECT 1 FROM activities WHERE score >= {_SURE_ACTIVITY} LIMIT 1")
    except QueryError:
        return None  # ingested before there was an activities table
    return "what is happening in the video" if rows else None


def _counted_kind(db_path: Path) -> str | None:
    """The most tracked kind (named kinds before moving objects): how many, in the video."""
    rows = _rows(db_path, f"SELECT category, COUNT(*) AS n FROM instances GROUP BY category "
                          f"ORDER BY category = '{MOVING}', n DESC LIMIT 1")
    return f"how many {kinds.plural(rows[0]['category'])} appear in the video" if rows else None


def _kinds(db_path: Path) -> str | None:
    """Where the detectors named more than one kind (cars and a bus, bottles and people)."""
    rows = _rows(db_path, f"SELECT COUNT(DISTINCT category) AS n FROM instances "
                          f"WHERE category != '{MOVING}'")
    return "what kinds of things appear in the video" if rows[0]["n"] > 1 else None


def _movement(db_path: Path) -> str | None:
    """Which way the kind that moves most often goes (people walking, cars passing)."""
    rows = _rows(db_path, f"SELECT category, COUNT(*) AS n FROM instances WHERE action LIKE "
                          f"'moves %' GROUP BY category ORDER BY category = '{MOVING}', n DESC "
                          f"LIMIT 1")
    if not rows:
        return None
    kind = rows[0]["category"]
    return f"which way do most of the {kinds.plural(kind)} move" if rows[0]["n"] > 1 else \
        f"which way does the {kind} move"


def _moving_object(db_path: Path) -> str | None:
    rows = _rows(db_path, f"SELECT first_seen FROM instances WHERE category = '{MOVING}' "
                          f"ORDER BY frame_count DESC LIMIT 1")
    return f"what colour is the moving object seen {_at(rows[0]['first_seen'])}" if rows else None


def _shots(db_path: Path) -> str | None:
    # Only where the schema has a shots table (scene and shot detection), and this video's
    # library was ingested with it.
    if "shots" not in TABLES:
        return None
    try:
        shots = _rows(db_path, "SELECT COUNT(*) AS n FROM shots")[0]["n"]
    except QueryError:
        return None
    return "when does the video cut to a new shot" if shots > 1 else None


def _captions(db_path: Path) -> str | None:
    """With a captioner, a question about what is seen midway, where its captions hold."""
    models = json.loads(_rows(db_path, "SELECT models FROM video")[0]["models"] or "{}")
    if models.get("captions", "evidence") == "evidence":
        return None
    rows = _rows(db_path, "SELECT t_start FROM timeline WHERE t_start >= "
                          "(SELECT duration / 2 FROM video) ORDER BY t_start LIMIT 1")
    return f"what can be seen {_at(rows[0]['t_start'])}" if rows else None


# A captioner's descriptions come before the kinds tracked: a video with one was ingested that way
# on purpose, and the tracked kinds (several in most videos) are asked about either way.
_TEMPLATES = (_speech, _text, _captions, _happening, _action, _counted_kind, _kinds,
              _moving_object, _shots, _movement)
