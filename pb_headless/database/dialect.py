"""The few facts about the host's `databases.Database` that the library needs: dialect, time, DDL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from databases import Database
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.ddl import ExecutableDDLElement

from pb_headless.database import internals

CASEFOLD_FUNCTION = "pb_casefold"
# URL scheme (as `databases` reads it) → the backend's name (database/backends/): the one map.
# MariaDB answers as `mysql`.
NAMES = {"sqlite": "sqlite", "postgresql": "postgresql", "postgres": "postgresql", "mysql": "mysql",
         "mariadb": "mysql"}  # fmt: skip


def backend_name(scheme: str) -> str | None:
    """The backend's name for a URL scheme (`mariadb` → `mysql`), None for a database we do not serve."""
    return NAMES.get(scheme)


def dialect_name(database: Database) -> str:
    """`sqlite`, `postgresql` or `mysql` (MariaDB answers as `mysql`)."""
    name = database.url.dialect
    return NAMES.get(name, name)


def dialect_of(database: Database) -> Dialect:
    backend_dialect = internals.backend_dialect(database)
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


def casefold(database_dialect: str, expression: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """A case-folded form of a text expression on the given dialect."""
    if database_dialect == "sqlite":
        return sa.func.pb_casefold(expression)
    return sa.func.lower(expression)
