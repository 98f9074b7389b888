"""What the summary panel lists about a video, on a real ingested clip."""

from __future__ import annotations

import sqlite3

from app import views
from backend.library import Library
from tests.conftest import copy_video


def test_the_summary_lists_what_each_tracked_person_does(ingested, library_settings, tmp_path):
    tud = Library(library_settings.home).get(ingested("mot15_TUD-Campus.mp4").video_id)
    entry = copy_video(tud, tmp_path)
    with sqlite3.connect(entry.db_path) as db:
        db.execute("DELETE FROM actions")  # only the rows below
        db.executemany("INSERT INTO actions (instance_id, action, t_start, t_end, score, evidence,"
                       " other_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(1, "walking", 0.0, 2.4, 0.9, "hips move", None),
                        (1, "holding", 2.4, 3.0, 0.6, "wrist on the bag #2", 2)])
    table = views.summary(entry)["instances"]
    rows = {row[0]: dict(zip(table["headers"], row)) for row in table["data"]}
    assert rows[1]["does"] == "walking 0.0 – 2.4 s; holding #2 2.4 – 3.0 s"
    assert all(row["does"] == "" for iid, row in rows.items() if iid != 1)
    # A video ingested before actions lists its objects as before, with no empty column.
    older = copy_video(tud, tmp_path / "older")
    with sqlite3.connect(older.db_path) as db:
        db.execute("DROP TABLE actions")
    assert "does" not in views.summary(older)["instances"]["headers"]
