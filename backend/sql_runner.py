"""Read-only, bounded SQL over one video's tables: the only way queries reach the database.

The CLI's `sql` command, the app and the agent's tools all go through `run_query`. The fences,
each enough on its own for its threat:

- the file is opened read-only (mode=ro, query_only);
- an authorizer allows SELECT and reads of the allowed tables only (no ATTACH, PRAGMA, writes or
  load_extension);
- string and blob values, columns, function arguments and LIKE patterns are capped by SQLite
  limits, and the whole result by `_MAX_RESULT_BYTES`;
- the built-in functions whose one call can run long (printf/format with a huge width or
  precision, instr/replace/trim whose work grows with the product of their input lengths) are
  replaced by wrappers that refuse such inputs and otherwise call the built-in; the wrappers
  judge the values SQLite will use (a `*` width of '2000000000abc' is 2000000000, a blob format
  is a format), not what Python makes of them; LIKE and GLOB, whose work grows with the
  pattern's length, get a short pattern limit;
- the wall-clock limit is enforced from outside the query: it runs in a worker thread, the caller
  waits at most `timeout_s`, then interrupts it, and the connection the wrappers call the
  built-ins on, and returns a QueryError whatever the query is doing (progress handlers on both
  stop runaway loops inside SQLite as well).
"""

from __future__ import annotations

import contextlib
import logging
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from backend.errors import QueryError
from backend.inputs import check_text
from backend.schema import TABLES

log = logging.getLogger(__name__)

_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                    sqlite3.SQLITE_RECURSIVE}
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
_MAX_VALUE_BYTES = 1_000_000
_MAX_COLUMNS = 200               # the widest join of every table has about 50 columns
_MAX_FUNCTION_ARGS = 127         # e.g. char(...) with many code points
# LIKE/GLOB work grows with pattern x text: 100 pattern bytes over a 1 MB value is 0.16 s.
_MAX_LIKE_PATTERN_BYTES = 100
_MAX_RESULT_BYTES = 16_000_000   # everything returned by one query
_MAX_FORMAT_WIDTH = 10_000       # printf/format width and precision
# instr/replace/trim compare every position of one input with the other: about
# 1.6 ns per pair here, so 1e8 pairs stay under a fifth of a second.
_MAX_PAIR_WORK = 100_000_000
_PROGRESS_EVERY = 1_000          # SQLite VM steps between deadline checks
_INTERRUPT_GRACE_S = 0.25        # after interrupt(), how long to wait for SQLite's own error


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple]
    truncated: bool
    seconds: float

    def as_dicts(self) -> list[dict]:
        return [dict(zip(self.columns, row)) for row in self.rows]


class _Refused(Exception):
    """Raised inside a function wrapper; SQLite reports it as 'user-defined function raised'."""


def _authorizer(allowed_tables: frozenset[str], schema_tables: frozenset[str]):
    # SQLite reports reads of a CTE under the CTE's own name, so a READ is refused only for a
    # real table outside the allowed set, the schema tables and PRAGMA table functions.
    def refused_read(table: str) -> bool:
        name = (table or "").lower()
        return (name in schema_tables and name not in allowed_tables) or \
            name.startswith(("sqlite_", "pragma_"))

    def check(action, arg1, arg2, _db, _trigger):
        if action not in _ALLOWED_ACTIONS:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_READ and refused_read(arg1):
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK
    return check


# --- guarded built-in functions --------------------------------------------------------------

# One printf conversion as SQLite's own parser reads it: flags, then width and precision (digits
# or `*`, each `*` taking the next argument), length modifiers, and the conversion letter.
_FORMAT_SPEC = re.compile(r"%[-+ #!0,]*(\*|\d+)?(?:\.(\*|\d*))?(?:ll?)?(.?)")
# Conversions that take an argument; %% and %n take none (SQL's printf ignores %n), and any other
# letter ends SQLite's formatting there, so nothing after it is read.
_TAKES_ARGUMENT = frozenset("dsgzqQwcouxXfeEGipr")
_NO_ARGUMENT = frozenset("%n")


def _size(value) -> int:
    if value is None:
        return 0
    return len(value) if isinstance(value, (str, bytes)) else len(str(value))


def _format_text(value) -> str:
    """The format as SQLite reads it: a blob's bytes as text, a number as its text."""
    if isinstance(value, bytes):
        return value.decode("latin-1")  # the spec characters are ASCII; the rest only passes by
    return "" if value is None else str(value)


def _check_format(args: tuple, as_integer) -> None:
    """Refuse a printf/format width or precision over the cap, inline or as a `*` argument,
    read as SQLite reads it (`as_integer`: '2000000000abc' is 2000000000, as are a blob and a
    real of that value)."""
    if not args:
        return
    position = 1
    for width, precision, conversion in _FORMAT_SPEC.findall(_format_text(args[0])):
        for part in (width, precision):
            if part == "*":
                number = as_integer(args[position]) if position < len(args) else 0
                position += 1
            else:
                number = int(part or 0)
            if abs(number) > _MAX_FORMAT_WIDTH:
                raise _Refused(f"a printf/format width or precision of {number} is over the "
                               f"limit of {_MAX_FORMAT_WIDTH}")
        if conversion in _NO_ARGUMENT:
            continue
        if conversion not in _TAKES_ARGUMENT:
            return
        position += 1


def _check_pair(name: str, first: int, second: int):
    def check(args: tuple, _as_integer) -> None:
        if len(args) > max(first, second):
            work = _size(args[first]) * _size(args[second])
            if work > _MAX_PAIR_WORK:
                raise _Refused(f"{name}() on inputs of {_size(args[first])} and "
                               f"{_size(args[second])} characters would take too long")
    return check


# name -> check of its arguments; each applies to every arity of the function.
_GUARDS = {
    "printf": _check_format,
    "format": _check_format,
    "instr": _check_pair("instr", 0, 1),
    "replace": _check_pair("replace", 0, 1),
    "trim": _check_pair("trim", 0, 1),
    "ltrim": _check_pair("ltrim", 0, 1),
    "rtrim": _check_pair("rtrim", 0, 1),
}
# LIKE and GLOB are bounded by _MAX_LIKE_PATTERN_BYTES instead: wrapping them would cost every
# row of a WHERE ... LIKE scan a Python call.


def _install_guards(conn: sqlite3.Connection, builtins: sqlite3.Connection,
                    refusals: list[str]) -> None:
    """Replace each guarded function by a wrapper: check the arguments, then call the built-in
    (on a private in-memory connection where it is not replaced, so results stay identical)."""
    for name, check in _GUARDS.items():
        conn.create_function(name, -1, _guarded(name, check, builtins, refusals),
                             deterministic=True)


def _guarded(name: str, check, builtins: sqlite3.Connection, refusals: list[str]):
    def as_integer(value) -> int:
        # What sqlite3_value_int64 makes of it: a numeric prefix of text or a blob, a real
        # truncated; NULL and NaN are 0.
        return builtins.execute("SELECT CAST(? AS INTEGER)", (value,)).fetchone()[0] or 0

    def call(*args):
        try:
            check(args, as_integer)
        except _Refused as e:
            refusals.append(str(e))
            raise
        placeholders = ", ".join("?" * len(args))
        try:
            return builtins.execute(f"SELECT {name}({placeholders})", args).fetchone()[0]
        except sqlite3.Error as e:  # e.g. a result over the size cap: keep SQLite's reason
            refusals.append(f"{name}(): {e}")
            raise
    return call


# --- running one query -----------------------------------------------------------------------

def _statement(sql: str) -> str:
    statement = sql.strip().rstrip(";").strip()
    if not statement:
        raise QueryError("The query is empty.")
    first_word = statement.split(None, 1)[0].upper()
    if first_word not in {"SELECT", "WITH"}:
        raise QueryError(f"Only SELECT queries are allowed here, not {first_word}.")
    return statement


def _set_limits(conn: sqlite3.Connection) -> None:
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, _MAX_COLUMNS)
    conn.setlimit(sqlite3.SQLITE_LIMIT_FUNCTION_ARG, _MAX_FUNCTION_ARGS)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, _MAX_LIKE_PATTERN_BYTES)


def _open(db_path: Path, allowed_tables: frozenset[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(f"{Path(db_path).resolve().as_uri()}?mode=ro", uri=True,
                           check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    _set_limits(conn)
    schema_tables = frozenset(name.lower() for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"))
    conn.set_authorizer(_authorizer(frozenset(t.lower() for t in allowed_tables), schema_tables))
    return conn


def _fetch(cursor: sqlite3.Cursor, max_rows: int) -> list[tuple]:
    rows, total = [], 0
    for row in iter(cursor.fetchone, None):
        total += sum(_size(v) for v in row)
        if total > _MAX_RESULT_BYTES:
            raise QueryError(f"The result is larger than {_MAX_RESULT_BYTES // 1_000_000} MB; "
                             "select fewer rows or shorter columns.")
        rows.append(tuple(row))
        if len(rows) > max_rows:
            break
    return rows


def _explain(error: Exception, timeout_s: float, allowed_tables: frozenset[str],
             refusals: list[str]) -> QueryError:
    """The QueryError a user can act on for an sqlite3 error."""
    text = str(error)
    if isinstance(error, (sqlite3.Warning, sqlite3.ProgrammingError)):
        # sqlite3 refuses a second statement after the first: one query per call.
        return QueryError(f"Only one SELECT statement is allowed per query ({text}).")
    if refusals:
        return QueryError(f"The query was refused: {refusals[0]}.")
    if "pattern too complex" in text:
        return QueryError(f"The query was refused: LIKE and GLOB patterns are limited to "
                          f"{_MAX_LIKE_PATTERN_BYTES} bytes.")
    if "interrupted" in text:
        return QueryError(f"The query ran longer than {timeout_s:g} s and was stopped.")
    if "not authorized" in text or "prohibited" in text:
        return QueryError(f"The query was refused ({text}): only reads of the tables "
                          f"{', '.join(sorted(allowed_tables))} are allowed.")
    return QueryError(f"SQL error: {text}.")


def _execute(conn: sqlite3.Connection, builtins: sqlite3.Connection, statement: str,
             max_rows: int, deadline: float, timeout_s: float,
             allowed_tables: frozenset[str]) -> list:
    """Runs in the worker thread: (columns, rows) or the QueryError to raise."""
    refusals: list[str] = []
    try:
        _set_limits(builtins)
        _install_guards(conn, builtins, refusals)
        for connection in (conn, builtins):
            connection.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0,
                                            _PROGRESS_EVERY)
        cursor = conn.execute(statement)
        rows = _fetch(cursor, max_rows)
        return [[d[0] for d in cursor.description or []], rows]
    except QueryError as e:
        return [e]
    except sqlite3.Error as e:
        return [_explain(e, timeout_s, allowed_tables, refusals)]
    finally:
        builtins.close()
        conn.close()


def run_query(db_path: Path, sql: str, *, timeout_s: float, max_rows: int,
              allowed_tables: frozenset[str] = frozenset(TABLES)) -> QueryResult:
    """Run one SELECT on `db_path`; raise QueryError with a clear reason for anything else.

    Returns within about `timeout_s` (plus a quarter second) whatever the query does."""
    check_text(sql, "The SQL query", QueryError)  # else the worker dies and it reads as a timeout
    statement = _statement(sql)
    try:
        conn = _open(db_path, allowed_tables)
    except sqlite3.Error as e:
        raise QueryError(f"The video's database could not be opened ({e}).") from e
    # The guarded built-ins run on a second connection (see _install_guards): a query past its
    # limit is interrupted on both, so neither goes on computing after the caller has its error.
    builtins = sqlite3.connect(":memory:", check_same_thread=False)
    started = time.monotonic()
    outcome: list = []
    worker = threading.Thread(
        target=lambda: outcome.extend(_execute(conn, builtins, statement, max_rows,
                                               started + timeout_s, timeout_s, allowed_tables)),
        name="sql-query", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        # Stops the query at its next VM step; one long step cannot hold the caller past the
        # grace period, the abandoned worker closes its connections when it ends.
        for connection in (conn, builtins):
            with contextlib.suppress(sqlite3.ProgrammingError):  # it closed just now
                connection.interrupt()
        worker.join(_INTERRUPT_GRACE_S)
    if worker.is_alive() or not outcome:
        log.warning("query still running %.1f s after its limit: %s", _INTERRUPT_GRACE_S,
                    statement[:200])
        raise QueryError(f"The query ran longer than {timeout_s:g} s and was stopped.")
    if isinstance(outcome[0], QueryError):
        raise outcome[0]
    columns, rows = outcome
    return QueryResult(columns=columns, rows=rows[:max_rows], truncated=len(rows) > max_rows,
                       seconds=time.monotonic() - started)
