"""Turn library data into what the page shows: cards, tables and markdown."""

from __future__ import annotations

from backend import actions, library_search
from backend.exports import read_only
from backend.library import VideoEntry
from backend.sql_runner import run_query
from backend.suggest import suggest

SUMMARY_QUERIES = {
    "instances": "SELECT id, category, ROUND(first_seen, 1) AS first_seen_s, "
                 "ROUND(last_seen, 1) AS last_seen_s, frame_count, appearance, action "
                 "FROM instances ORDER BY id",
    "speech": "SELECT ROUND(t_start, 1) AS start_s, ROUND(t_end, 1) AS end_s, text "
              "FROM speech ORDER BY t_start",
    "ocr": "SELECT ROUND(MIN(t), 1) AS first_seen_s, ROUND(MAX(t), 1) AS last_seen_s, text, "
           "ROUND(MAX(confidence), 2) AS confidence FROM ocr GROUP BY text ORDER BY MIN(t)",
}


def clock(t: float) -> str:
    """0:03.2, 12:05.0 or 1:02:03.5: video times as people read them."""
    minutes, seconds = divmod(max(0.0, float(t)), 60)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{seconds:04.1f}" if hours else f"{minutes}:{seconds:04.1f}"


def library_choices(entries: list[VideoEntry]) -> list[tuple[str, str]]:
    return [(f"{e.name} ({clock(e.duration)})", e.video_id) for e in library_search.find(entries)]


def library_rows(entries: list[VideoEntry]) -> list[list[str]]:
    """Library list rows: thumbnail, then name, duration and status as markdown."""
    return [[str(e.folder / "thumb.jpg"), f"**{e.name}**\n\n{clock(e.duration)} · ready"]
            for e in entries]


def library_note(entries: list[VideoEntry], shown: list[VideoEntry] | None = None,
                 query: str = "") -> str:
    if not entries:
        return "The library is empty: upload a video below to start."
    total = sum(e.duration for e in entries)
    note = f"{len(entries)} video{'s' if len(entries) != 1 else ''} · {clock(total)} in total"
    if query.strip():
        found = len(shown or [])
        searched = "name, kinds, actions, picture labels, words said or shown"
        note = (f"{found} of {len(entries)} match “{query.strip()}” ({searched})" if found
                else f"Nothing in {len(entries)} videos matches “{query.strip()}” ({searched})")
    return note


def _table(entry: VideoEntry, sql: str) -> dict:
    result = run_query(entry.db_path, sql, timeout_s=5.0, max_rows=500)
    return {"headers": result.columns, "data": [list(r) for r in result.rows]}


# A person's actions past this many are counted, not listed: the cell stays a line or two.
_ACTIONS_LISTED = 6


def _with_actions(entry: VideoEntry, instances: dict) -> dict:
    """The instances table with what each one does, where the video has actions (a column
    that would be empty in every row of an older video is left out)."""
    with read_only(entry) as db:
        done = actions.by_instance(actions.read(db))
    if not done:
        return instances
    column = instances["headers"].index("id")
    return {"headers": [*instances["headers"], "does"],
            "data": [[*row, _doings(done.get(row[column], []))] for row in instances["data"]]}


def _doings(done: list[actions.Action]) -> str:
    """'walking 0.0 – 3.2 s; holding #4 3.5 – 9.0 s', then how many more."""
    said = [f"{a.action}{f' #{a.other_id}' if a.other_id is not None else ''} {a.span()}"
            for a in done[:_ACTIONS_LISTED]]
    more = len(done) - _ACTIONS_LISTED
    return "; ".join(said) + (f"; and {more} more" if more > 0 else "")


def _listed(value) -> str:
    """A model's name, or a list of what it reports, shortened past a handful (80 kinds)."""
    if not isinstance(value, list):
        return str(value)
    return ", ".join(map(str, value)) if len(value) <= 6 else f"{len(value)} kinds"


def summary(entry: VideoEntry) -> dict:
    """Everything the summary panel shows for one video."""
    info = entry.info()
    tables = info["tables"]
    people = _with_actions(entry, _table(entry, SUMMARY_QUERIES["instances"]))
    kinds = run_query(entry.db_path, "SELECT category, COUNT(*) FROM instances GROUP BY category "
                                     "ORDER BY COUNT(*) DESC", timeout_s=5.0, max_rows=100).rows
    facts = (
        f"### {info['name']}\n"
        f"{info['duration']:.1f} s · {info['width']}×{info['height']} · {info['fps']:.1f} fps · "
        f"{'with' if info['has_audio'] else 'no'} audio · id `{entry.video_id}`\n\n"
        f"**{tables['instances']}** tracked objects"
        + (f" ({', '.join(f'{n} {kind}' for kind, n in kinds)})" if kinds else "")
        + f" · **{tables['detections']}** boxes · "
        f"**{tables['timeline']}** timeline steps · **{tables['speech']}** speech segments · "
        f"**{tables['ocr']}** text reads\n\n"
        f"Models: " + ", ".join(f"{k}: {_listed(v)}" for k, v in info["models"].items() if v)
        + "".join(f"\n\n**Warning:** {w}" for w in info.get("warnings", []))
    )
    return {"facts": facts, "instances": people, "speech": _table(entry, SUMMARY_QUERIES["speech"]),
            "ocr": _table(entry, SUMMARY_QUERIES["ocr"]), "video": str(entry.playable),
            "suggestions": suggest(entry.db_path)}
