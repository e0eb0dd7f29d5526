"""Kept-open SQLite connections for the host's `databases.Database` (docs/performance.md).

`databases`' SQLite backend opens a new aiosqlite connection, with a thread of its own, on every
acquisition and closes it on release: CPU on every request before any query runs (docs/performance.md),
and a cold page cache every time. This pool keeps released connections open (a few per process) and
hands them out again; everything else about the backend stays as `databases` made it. The pool also
carries the database's accelerator (`sqlite/accelerator.py`): reads on the loop's thread and noted
positions need a file every connection opens alike.
"""

from __future__ import annotations

import logging
from typing import Any

import aiosqlite
from databases.backends.sqlite import SQLitePool

from pb_headless.database import internals
from pb_headless.database.sqlite.accelerator import SQLiteAccelerator
from pb_headless.database.sqlite.inline import InlineReads
from pb_headless.database.sqlite.writer_turns import WriterTurns

log = logging.getLogger("pb_headless")

KEPT_CONNECTIONS = 8  # idle connections kept per process; more are opened under load, then closed


class KeptConnections(SQLitePool):
    """A `SQLitePool` whose released connections stay open for the next acquisition."""

    def __init__(self, original: SQLitePool, size: int = KEPT_CONNECTIONS) -> None:
        self.__dict__.update(internals.pool_state(original))  # the path, its options, the memory reference
        self._idle: list[aiosqlite.Connection] = []
        self._size = size
        path = internals.pool_database(self)
        options = internals.pool_options(self) or {}
        on_disk = _on_disk(self)
        self.accelerator = SQLiteAccelerator(InlineReads(path, options) if on_disk else None)
        # Writers of several processes take turns on a file beside the database (sqlite/writer_turns.py).
        self.writer_turns = WriterTurns(path) if on_disk else None

    async def acquire(self) -> aiosqlite.Connection:
        while self._idle:
            connection = self._idle.pop()
            if internals.aiosqlite_is_open(connection):
                return connection
        path = internals.pool_database(self)
        options = internals.pool_options(self) or {}
        connection = aiosqlite.connect(database=path, isolation_level=None, **options)
        internals.detach_thread(connection)
        await connection.__aenter__()
        return connection

    async def release(self, connection: aiosqlite.Connection) -> None:
        # A connection left inside a transaction (a failed request) is closed, never handed on.
        if (
            len(self._idle) < self._size
            and internals.aiosqlite_is_open(connection)
            and not connection.in_transaction
        ):
            self._idle.append(connection)
            return
        await connection.__aexit__(None, None, None)

    async def close(self) -> None:
        self.accelerator.close()
        if self.writer_turns is not None:
            self.writer_turns.close()
        idle, self._idle = self._idle, []
        for connection in idle:
            try:
                await connection.__aexit__(None, None, None)
            except Exception:  # closing is best effort: the process may be going down
                log.debug("pb_headless: closing a kept SQLite connection failed", exc_info=True)


def _on_disk(pool: Any) -> bool:
    """A database every connection opens alike: a file, not a private or shared in-memory one."""
    database = internals.pool_database(pool)
    return not (
        internals.pool_is_in_memory_reference(pool)
        or database in ("", ":memory:")
        or database.startswith("file:")
        or "mode=memory" in database
    )


def keep_open(database: Any) -> None:
    """Swap the backend's pool for a kept-open one, and close the kept connections on disconnect."""
    found = internals.pool_of(database)
    if isinstance(found, KeptConnections):
        return
    pool = KeptConnections(found)
    internals.swap_in(database, pool, pool.close)
