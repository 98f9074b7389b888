"""A video's tables and an answer as files other programs read: subtitles, CSV, GraphML,
Markdown and JSON.

`video` renders what ingest stored (transcript, tracks, knowledge graph) from the video's
database; `answer` renders one `ask --json` answer with its key frames. Both return text, and
only `target` (and `answer.write` through it) touches the disk, so the CLI and the app choose
where files go.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads the format names at every start: no pandas, no nltk for that
    import sqlite_utils

    from backend.library import VideoEntry

VIDEO_FORMATS = ("srt", "vtt", "csv", "graphml")
ANSWER_FORMATS = ("md", "json")


@contextmanager
def read_only(entry: VideoEntry) -> Iterator[sqlite_utils.Database]:
    """The video's database, opened so that no export can change it."""
    import sqlite_utils

    conn = sqlite3.connect(f"{entry.db_path.resolve().as_uri()}?mode=ro", uri=True)
    db = sqlite_utils.Database(conn)
    try:
        yield db
    finally:
        db.close()
