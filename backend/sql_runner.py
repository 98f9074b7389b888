"""Read-only, bounded SQL over one video's tables: the only way queries reach the database.

The CLI's `sql` command and the agent's tools both go through `run_query`. Four fences, each
enough on its own for its threat: the file is opened read-only (mode=ro, query_only); an
authorizer allows SELECT and reads of the allowed tables only (no ATTACH, PRAGMA, writes or
load_extension); a progress handler aborts queries past the time limit; and rows, string and
blob sizes are capped.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from backend.errors import QueryError
from backend.schema import TABLES

_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                    sqlite3.SQLITE_RECURSIVE}
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
_MAX_VALUE_BYTES = 1_000_000
_PROGRESS_EVERY = 1_000  # SQLite VM steps between deadline checks


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple]
    truncated: bool
    seconds: float

    def as_dicts(self) -> list[dict]:
        return [dict(zip(self.columns, row)) for row in self.rows]


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


def run_query(db_path: Path, sql: str, *, timeout_s: float, max_rows: int,
              allowed_tables: frozenset[str] = frozenset(TABLES)) -> QueryResult:
    """Run one SELECT on `db_path`; raise QueryError with a clear reason for anything else."""
    statement = sql.strip().rstrip(";").strip()
    if not statement:
        raise QueryError("The query is empty.")
    first_word = statement.split(None, 1)[0].upper()
    if first_word not in {"SELECT", "WITH"}:
        raise QueryError(f"Only SELECT queries are allowed here, not {first_word}.")

    conn = sqlite3.connect(f"{Path(db_path).resolve().as_uri()}?mode=ro", uri=True,
                           check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _MAX_VALUE_BYTES)
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        schema_tables = frozenset(name.lower() for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"))
        conn.set_authorizer(_authorizer(frozenset(t.lower() for t in allowed_tables), schema_tables))
        started = time.monotonic()
        deadline = started + timeout_s
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, _PROGRESS_EVERY)
        try:
            cursor = conn.execute(statement)
            rows = cursor.fetchmany(max_rows + 1)
        except (sqlite3.Warning, sqlite3.ProgrammingError) as e:
            # sqlite3 refuses a second statement after the first: one query per call.
            raise QueryError(f"Only one SELECT statement is allowed per query ({e}).") from e
        except sqlite3.DatabaseError as e:
            if "interrupted" in str(e):
                raise QueryError(f"The query ran longer than {timeout_s:g} s and was stopped.") from e
            if "not authorized" in str(e) or "prohibited" in str(e):
                raise QueryError(
                    f"The query was refused ({e}): only reads of the tables "
                    f"{', '.join(sorted(allowed_tables))} are allowed.") from e
            raise QueryError(f"SQL error: {e}.") from e
        columns = [d[0] for d in cursor.description or []]
        return QueryResult(columns=columns, rows=[tuple(r) for r in rows[:max_rows]],
                           truncated=len(rows) > max_rows, seconds=time.monotonic() - started)
    finally:
        conn.close()

