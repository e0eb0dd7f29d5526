"""Write transactions: all or nothing, in a fair order on SQLite, and moving the data version.

Every write made through the library moves the shared data version in its own commit, so the counts
each instance keeps (`query/totals.py`) go out of date on every instance at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator

from databases import Database

from pb_headless.database.dialect import dialect_name
from pb_headless.state.version import bump_data_version

# SQLite writers of one process queue here, first come first served, before asking for the write
# lock: SQLite's own busy handler retries with growing sleeps, and under many writers one of them can
# starve past the database time limit while the others keep winning the lock.
_sqlite_writers: weakref.WeakKeyDictionary[Database, asyncio.Lock] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def write_transaction(database: Database) -> AsyncIterator[None]:
    """One write, all or nothing, that also moves the data version (so kept counts of every instance
    go out of date in the same commit). SQLite takes its write lock up front (BEGIN IMMEDIATE): a
    deferred transaction that reads first and writes later can deadlock against another writer."""
    if dialect_name(database) != "sqlite":
        async with database.transaction():
            yield
            await bump_data_version(database)
        return
    queue = _sqlite_writers.setdefault(database, asyncio.Lock())
    async with queue, database.connection() as connection:
        await connection.execute("BEGIN IMMEDIATE")
        try:
            yield
            await bump_data_version(database)
        except BaseException:
            await connection.execute("ROLLBACK")
            raise
        await connection.execute("COMMIT")
