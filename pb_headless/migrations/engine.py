"""The one short-lived connection a migration runs on: made from the host's `databases` URL, holding
the database's migration lock for as long as it is open.

Alembic speaks SQLAlchemy, the host speaks `databases`; so a migration opens a connection of the
backend's one SQLAlchemy engine (`Backend.engine`: the same URL with the matching async driver, no
pool), which the registry's reflection uses too.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from databases import Database
from sqlalchemy.engine import URL, Connection, make_url

from pb_headless.database.backends import Backend, backend_class, backend_for
from pb_headless.migrations.errors import MigrationError

T = TypeVar("T")


def engine_url(database: Database) -> URL:
    """The host's URL with the async driver SQLAlchemy needs for the same database."""
    url = make_url(str(database.url))
    scheme = url.drivername.partition("+")[0]
    found = backend_class(scheme)
    if found is None:
        raise ValueError(f"pb_headless cannot migrate a {scheme} database (sqlite, postgresql, mysql)")
    if found.is_file and url.database in (None, "", ":memory:"):
        raise ValueError("an in-memory SQLite database cannot be migrated: use a database file")
    return backend_for(database).engine_url()


async def run_locked(database: Database, work: Callable[[Connection], T]) -> T:
    """`work(connection)` on a connection of its own that holds the migration lock; two instances
    doing this at once take turns, so the second finds the first one's result."""
    async with _connection(database) as connection:
        return await connection.run_sync(_with_lock, backend_for(database), work)


@contextlib.asynccontextmanager
async def _connection(database: Database) -> AsyncIterator[Any]:
    """A connection of the backend's one engine (no pool: it is closed at the end)."""
    engine_url(database)  # refuses, saying why, a database that cannot be migrated
    backend = backend_for(database)
    async with backend.engine().connect() as connection:
        await connection.run_sync(backend.prepare_migration_connection)
        yield connection


def _with_lock(connection: Connection, backend: Backend, work: Callable[[Connection], T]) -> T:
    released = backend.take_migration_lock(connection)
    if released is None:  # the lock is the write transaction itself (SQLite)
        return _in_write_transaction(connection, work)
    unlock, names = released
    # The lock belongs to the session and outlives this commit; each step has a transaction of its own.
    connection.commit()
    try:
        return work(connection)
    finally:
        connection.rollback()
        connection.execute(unlock, names)
        connection.commit()


def _in_write_transaction(connection: Connection, work: Callable[[Connection], T]) -> T:
    """SQLite: one outer transaction holds the write lock; each step runs in a savepoint of it, so the
    steps before a failing one are kept."""
    transaction = connection.begin()
    try:
        result = work(connection)
    except MigrationError:
        transaction.commit()
        raise
    except BaseException:
        transaction.rollback()
        raise
    transaction.commit()
    return result
