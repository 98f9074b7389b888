"""The read-only, bounded SQL runner on a real ingested video: reads work, nothing else does."""

from __future__ import annotations

import time

import pytest

from backend.errors import QueryError
from backend.library import Library, content_hash
from backend.sql_runner import run_query


@pytest.fixture(scope="module")
def db(ingested, library_settings):
    result = ingested("mot15_TUD-Campus.mp4")
    return Library(library_settings.home).get(result.video_id).db_path


def run(db, sql, timeout_s=2.0, max_rows=50):
    return run_query(db, sql, timeout_s=timeout_s, max_rows=max_rows)


def test_select_returns_rows_and_columns(db):
    result = run(db, "SELECT id, category FROM instances ORDER BY id")
    assert result.columns == ["id", "category"]
    assert result.rows and all(r[1] == "person" for r in result.rows)
    assert [r[0] for r in result.rows] == list(range(1, len(result.rows) + 1))


def test_cte_and_joins_are_allowed(db):
    result = run(db, "WITH f AS (SELECT MIN(frame) AS m FROM detections) "
                     "SELECT COUNT(DISTINCT d.instance_id) FROM detections d JOIN f ON d.frame = f.m")
    assert result.rows[0][0] >= 1


@pytest.mark.parametrize("sql, reason", [
    ("INSERT INTO instances (id, category) VALUES (999, 'x')", "Only SELECT"),
    ("UPDATE instances SET category = 'x'", "Only SELECT"),
    ("DELETE FROM detections", "Only SELECT"),
    ("DROP TABLE instances", "Only SELECT"),
    ("CREATE TABLE t (x)", "Only SELECT"),
    ("ATTACH DATABASE '/tmp/evil.db' AS evil", "Only SELECT"),
    ("PRAGMA writable_schema = ON", "Only SELECT"),
    ("VACUUM", "Only SELECT"),
    ("SELECT 1; DELETE FROM instances", "one SELECT"),
    ("SELECT load_extension('/tmp/evil.so')", "refused"),
    ("SELECT * FROM pragma_table_info('instances')", "refused"),
    ("SELECT name FROM sqlite_master", "refused"),
    ("WITH x AS (SELECT * FROM sqlite_master) SELECT * FROM x", "refused"),
    ("WITH x AS (SELECT 1) DELETE FROM instances", "SQL error|refused"),
    ("", "empty"),
])
def test_refused_statements_change_nothing(db, sql, reason):
    before = content_hash(db)
    with pytest.raises(QueryError, match=reason):
        run(db, sql)
    assert content_hash(db) == before


def test_runaway_recursive_query_is_stopped_in_time(db):
    started = time.monotonic()
    with pytest.raises(QueryError, match="longer than"):
        run(db, "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
                "SELECT COUNT(*) FROM n", timeout_s=0.5)
    assert time.monotonic() - started < 5


def test_huge_values_are_refused(db):
    with pytest.raises(QueryError, match="too big|SQL error"):
        run(db, "SELECT zeroblob(100000000)")


def test_row_limit_truncates(db):
    result = run(db, "SELECT * FROM detections", max_rows=3)
    assert len(result.rows) == 3 and result.truncated
