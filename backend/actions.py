"""What each tracked person does and when, read from the video's `actions` table as typed records.

One reader for the timeline, the exports and the suggested questions, so that all of them treat
a video ingested before the table existed the same way: as a video with no actions.
"""

from __future__ import annotations

import sqlite_utils

from backend.ingest.actions import Action


def read(db: sqlite_utils.Database) -> list[Action]:
    """Every action, by instance then time; none where the video predates the table."""
    if not db["actions"].exists():
        return []
    rows = db.query("SELECT instance_id, action, t_start, t_end, score, evidence, other_id "
                    "FROM actions WHERE action IS NOT NULL ORDER BY instance_id, t_start, id")
    return [Action(instance_id=r["instance_id"], action=r["action"], t_start=r["t_start"],
                   t_end=max(r["t_start"], r["t_end"] if r["t_end"] is not None else r["t_start"]),
                   score=r["score"], evidence=r["evidence"] or "", other_id=r["other_id"])
            for r in rows]


def by_instance(actions: list[Action]) -> dict[int, list[Action]]:
    grouped: dict[int, list[Action]] = {}
    for action in actions:
        grouped.setdefault(action.instance_id, []).append(action)
    return grouped
