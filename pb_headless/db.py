"""The few facts about the host's `databases.Database` that the library needs: dialect, time, DDL."""

from __future__ import annotations

import logging
import sqlite3
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from databases import Database
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.ddl import ExecutableDDLElement

log = logging.getLogger("pb_headless")

CASEFOLD_FUNCTION = "pb_casefold"
SQLITE_BUSY_TIMEOUT = 30.0


def dialect_name(database: Database) -> str:
    """`sqlite`, `postgresql` or `mysql` (MariaDB answers as `mysql`)."""
    name = database.url.dialect
    return "mysql" if name == "mariadb" else name


def dialect_of(database: Database) -> Dialect:
    backend_dialect = getattr(getattr(database, "_backend", None), "_dialect", None)
    if backend_dialect is not None:
        return backend_dialect
    return sa.create_mock_engine(f"{dialect_name(database)}://", executor=None).dialect


def utcnow() -> datetime:
    """Now as naive UTC: every library table stores naive UTC so all three databases agree."""
    return datetime.now(UTC).replace(tzinfo=None)


def to_naive_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def as_aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


async def run_ddl(database: Database, element: ExecutableDDLElement) -> None:
    await database.execute(str(element.compile(dialect=dialect_of(database))))


class _CasefoldingConnection(sqlite3.Connection):
    """A SQLite connection that knows Unicode case folding, which SQLite's own `lower()` lacks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.create_function(CASEFOLD_FUNCTION, 1, _casefold, deterministic=True)


def _casefold(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def prepare(database: Database) -> None:
    """Make the host's SQLite database fit for serving: Unicode case folding and kept-open connections.

    `databases` opens a new aiosqlite connection (and thread) per use and passes its options on to
    `sqlite3.connect`, so a connection factory reaches every connection the host's database opens;
    the pool is swapped for one that keeps released connections open for the next request.
    """
    if dialect_name(database) != "sqlite":
        return
    backend = getattr(database, "_backend", None)
    pool = getattr(backend, "_pool", None)
    options = getattr(pool, "_options", None)
    if options is None:
        log.warning("pb_headless: cannot install Unicode case folding on this SQLite backend")
        return
    options.setdefault("factory", _CasefoldingConnection)
    # Writers queue for the write lock rather than fail: SQLite's 5 s default is short under load.
    options.setdefault("timeout", SQLITE_BUSY_TIMEOUT)
    from pb_headless.sqlite_pool import keep_connections  # aiosqlite is there: this is SQLite

    keep_connections(backend)


def casefold(database_dialect: str, expression: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """A case-folded form of a text expression on the given dialect."""
    if database_dialect == "sqlite":
        return sa.func.pb_casefold(expression)
    return sa.func.lower(expression)
