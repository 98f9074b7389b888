"""The read-only, bounded SQL runner on a real ingested video: reads work, nothing else does."""

from __future__ import annotations

import sqlite3
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


def test_a_query_that_is_not_utf8_is_refused_at_once(tmp_path):
    # A lone surrogate (bytes that were not UTF-8) once killed the worker thread, and the caller
    # waited out the limit to report a query that "ran longer than 2 s".
    db = tmp_path / "video.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE instances (id INTEGER)")
    started = time.monotonic()
    with pytest.raises(QueryError, match="The SQL query is not valid UTF-8 text"):
        run(db, "SELECT '\udcff' FROM instances")
    assert time.monotonic() - started < 0.5


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


# --- limits that hold for any single call ------------------------------------------------------
# Each of these ran for many seconds in one SQLite step before the guards (printf 20.6 s,
# instr 8.1 s, LIKE 25 s): every one must now end quickly with a QueryError that says why.

_BIG = "WITH a(s) AS (SELECT replace(hex(zeroblob(400000)), '0', 'a')) "  # 800 kB of 'a'


@pytest.mark.parametrize("sql, reason", [
    ("SELECT printf('%.*c', 2000000000, 'x')", "width or precision"),
    ("SELECT printf('%.*c', 2000000000, 'x') FROM instances", "width or precision"),
    ("SELECT printf('%2000000000d', 1)", "width or precision"),
    ("SELECT format('%*d', 2000000000, 1)", "width or precision"),
    ("SELECT printf('%!.200000000f', 1.5)", "width or precision"),
    (_BIG + "SELECT instr(s || 'b', substr(s, 1, 150000) || 'b') FROM a", r"instr\(\)"),
    (_BIG + "SELECT replace(s, substr(s, 1, 2000) || 'b', 'c') FROM a", r"replace\(\)"),
    (_BIG + "SELECT trim(s, substr(s, 1, 1000) || 'b') FROM a", r"trim\(\)"),
    (_BIG + "SELECT ltrim(s, substr(s, 1, 1000) || 'b') FROM a", r"ltrim\(\)"),
    (_BIG + "SELECT s LIKE '%' || substr(s, 1, 20000) || 'b' FROM a", "patterns are limited"),
    (_BIG + "SELECT s GLOB '*' || substr(s, 1, 20000) || 'b' FROM a", "patterns are limited"),
    ("SELECT replace(hex(zeroblob(400000)), '0', '00')", r"replace\(\): string or blob too big"),
    ("SELECT zeroblob(2000000000)", "too big"),
    ("SELECT randomblob(2000000000)", "too big"),
    ("SELECT char(" + ", ".join(["1114111"] * 300) + ")", "too many arguments"),
    ("SELECT zeroblob(999999), zeroblob(999999), zeroblob(999999) FROM "
     "(WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 100) SELECT x FROM n)",
     "larger than"),
    ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 30000000) "
     "SELECT x FROM n ORDER BY randomblob(16) LIMIT 1", "longer than"),
    ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 1000) "
     "SELECT count(*) FROM n AS a, n AS b, n AS c", "longer than"),
])
def test_expensive_single_calls_are_refused_in_time(db, sql, reason):
    limit = 1.0
    started = time.monotonic()
    with pytest.raises(QueryError, match=reason):
        run(db, sql, timeout_s=limit)
    assert time.monotonic() - started < 3 * limit


# printf reads a width or precision as SQLite converts it: the numeric prefix of text, the bytes
# of a blob, a real truncated; %n takes no argument; a blob is a format too. Each of these got
# past the guard, and the built-in then ran on for seconds after the caller had its error.
_SPEC_ATTACKS = [
    "SELECT printf(CAST('%.2000000000c' AS BLOB), 'x')",
    "SELECT printf('%.*c', '2000000000abc', 'x')",
    "SELECT printf('%.*c', CAST('2000000000' AS BLOB), 'x')",
    "SELECT printf('%.*c', 2e9, 'x')",
    "SELECT format('%*c', ' -2000000000', 'x')",
    "SELECT printf('%n%.*c', 2000000000, 'x')",
    "SELECT printf('" + "%.*c" * 5 + "', " + ", ".join(["'2000000000x', 'x'"] * 5) + ")",
]


@pytest.mark.parametrize("sql", _SPEC_ATTACKS)
def test_printf_specs_are_judged_as_sqlite_reads_them_and_burn_no_cpu_after_the_reply(db, sql):
    cpu_before = time.process_time()
    with pytest.raises(QueryError, match="width or precision of -?2000000000 is over"):
        run(db, sql, timeout_s=1.0)
    replied = time.process_time()
    time.sleep(1.5)
    # Whatever ran for this query has stopped: the process is idle once the caller has its error.
    assert time.process_time() - replied < 0.3
    assert replied - cpu_before < 0.5


@pytest.mark.parametrize("value", ["'3'", "'3abc'", "'  +3 x'", "CAST('3' AS BLOB)", "3.9",
                                   "-3", "'3e9'"])
def test_the_guard_reads_a_star_argument_as_sqlite_does(db, monkeypatch, value):
    import backend.sql_runner as runner

    # With a cap of 3, a value SQLite reads as 3 passes and prints 3 characters; the same value
    # written with a 4 is refused.
    monkeypatch.setattr(runner, "_MAX_FORMAT_WIDTH", 3)
    result = run(db, f"SELECT printf('%.*c', {value}, 'x'), length(printf('%*c', {value}, 'x'))")
    assert result.rows == [("xxx", 3)]
    with pytest.raises(QueryError, match="width or precision of -?4 is over"):
        run(db, f"SELECT printf('%.*c', {value.replace('3', '4', 1)}, 'x')")


def test_guarded_functions_give_the_builtin_results(db):
    result = run(db, "SELECT printf('%5.2f|%s|%-4d|%%', 3.14159, 'ab', 7), format('%03d', 5), "
                     "printf('%.*c', 3, 'x'), instr('hello', 'l'), replace('abc', 'b', 'x'), "
                     "trim('  a  '), ltrim('xxa', 'x'), rtrim('axx', 'x'), instr(NULL, 'a'), "
                     "'Abc' LIKE 'a%', 'abc' GLOB 'a*'")
    assert result.rows == [(" 3.14|ab|7   |%", "005", "xxx", 3, "axc", "a", "a", "a", None, 1, 1)]


def test_the_limit_holds_even_when_one_step_never_returns(db, monkeypatch):
    # A function that sleeps stands for any single step the VM cannot interrupt: the caller
    # still gets its answer at the limit, not when the step ends.
    import backend.sql_runner as runner

    monkeypatch.setitem(runner._GUARDS, "instr", lambda *_: time.sleep(3))
    started = time.monotonic()
    with pytest.raises(QueryError, match="longer than 0.5 s"):
        run(db, "SELECT instr('a', 'a')", timeout_s=0.5)
    assert time.monotonic() - started < 1.5
