"""Write transactions: all or nothing, in a fair order on SQLite, and moving the data version.

Every write made through the library moves the shared data version in its own commit, so the counts
each instance keeps (`query/totals.py`) go out of date on every instance at once.

BEGIN, COMMIT and ROLLBACK are sent on the task's connection here rather than through `databases`'
`Transaction`, which leaves its connection checked out when a cancel lands inside its BEGIN or
COMMIT (its start and commit count the connection in and out around those awaits, with no way
out in between). A connection whose BEGIN, COMMIT or ROLLBACK did not finish is closed, never
reused (`connections.py`); a COMMIT the database did not confirm is an unknown outcome
(`UnitOfWork.committing`, docs/writes.md).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator

from databases import Database
from databases.core import Connection

from pb_headless.database import internals
from pb_headless.database.backends import SQLiteBackend, backend_for
from pb_headless.database.connections import discard, held_connection
from pb_headless.database.database_errors import is_unavailable
from pb_headless.database.deadline import OUTCOME_UNKNOWN, UnitOfWork, committing
from pb_headless.database.shared_version import bump_data_version, bump_data_version_sql
from pb_headless.errors import ServiceUnavailable


@contextlib.asynccontextmanager
async def write_transaction(database: Database, unit: UnitOfWork | None) -> AsyncIterator[None]:
    """One write, all or nothing, that also moves the data version (so kept counts of every instance
    go out of date in the same commit); `unit`, the request's, learns how far its COMMIT got.
    SQLite takes its write lock up front (BEGIN IMMEDIATE): a deferred transaction that reads first
    and writes later can deadlock against another writer."""
    backend = backend_for(database)
    if not isinstance(backend, SQLiteBackend):
        async with held_connection(database) as connection:
            await connection.execute("BEGIN")
            async with _rolled_back_on_error(database, connection):
                yield
                await bump_data_version(database)
            await _commit(database, connection, unit)
        return
    # This process's SQLite writers take turns on the backend's queue (`SQLiteBackend.writers`), then
    # with other processes' on the file's (`sqlite/writer_turns.py`).
    async with backend.writers, database.connection() as connection, backend.process_turn():
        await _sqlite_run(connection, "BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            await _sqlite_run(connection, "ROLLBACK")
            raise
        with committing(unit):  # cut off in the trip, nobody knows whether the COMMIT ran
            await _sqlite_bump_and_commit(connection, bump_data_version_sql(database))


async def _sqlite_run(connection: Connection, sql: str) -> None:
    """One statement of the transaction itself, straight to aiosqlite under the connection's query
    lock: one trip to its thread, where `databases` would compile a text clause and make a cursor
    (three trips). SQLite's write lock is held across these trips, so each one is a wait for every
    other writer (docs/performance.md, "What a write costs")."""
    async with internals.query_lock(connection) or contextlib.nullcontext():
        await internals.driver(connection).execute_fetchall(sql)


async def _sqlite_bump_and_commit(connection: Connection, bump_sql: str) -> None:
    """The data version's bump and the COMMIT in one trip to aiosqlite's thread (`_bumped_and_committed`)."""
    async with internals.query_lock(connection) or contextlib.nullcontext():
        await internals.run_on_sqlite_thread(internals.driver(connection), _bumped_and_committed, bump_sql)


def _bumped_and_committed(sqlite: sqlite3.Connection, bump_sql: str) -> None:
    """On the connection's thread: the bump, then COMMIT. A bump the database refuses is rolled back
    here, so nothing is stored, and raised; a refused COMMIT raises as it would alone (SQLite has then
    rolled back, or the transaction is still open and the connection is closed by whoever holds it)."""
    try:
        sqlite.execute(bump_sql)
    except Exception:
        if sqlite.in_transaction:
            sqlite.execute("ROLLBACK")
        raise
    sqlite.execute("COMMIT")


@contextlib.asynccontextmanager
async def _rolled_back_on_error(database: Database, connection: Connection) -> AsyncIterator[None]:
    """An error inside the transaction rolls it back; a connection that cannot even roll back is
    closed. A cancel is left to `held_connection`, which closes the connection: the server then
    rolls back by itself."""
    try:
        yield
    except Exception:
        try:
            await connection.execute("ROLLBACK")
        except Exception:
            discard(database, connection)
        raise


async def _commit(database: Database, connection: Connection, unit: UnitOfWork | None) -> None:
    """COMMIT; a connection lost under it leaves the outcome unknown, and the client is told so."""
    try:
        with committing(unit):
            await connection.execute("COMMIT")
    except Exception as error:
        discard(database, connection)
        if is_unavailable(error):
            raise ServiceUnavailable(OUTCOME_UNKNOWN) from error
        raise  # the database refused the COMMIT (a deferred constraint): nothing was written
