"""Kept-open SQLite connections for the host's `databases.Database`.

`databases`' SQLite backend opens a new aiosqlite connection, with a thread of its own, on every
acquisition and closes it on release: about a millisecond of CPU per request before any query runs,
and a cold page cache every time. This pool keeps released connections open (a few per process) and
hands them out again; everything else about the backend stays as `databases` made it.
"""

from __future__ import annotations

import logging
from typing import Any

import aiosqlite
from databases.backends.sqlite import SQLitePool

log = logging.getLogger("pb_headless")

KEPT_CONNECTIONS = 8  # idle connections kept per process; more are opened under load, then closed


class KeptConnections(SQLitePool):
    """A `SQLitePool` whose released connections stay open for the next acquisition."""

    def __init__(self, original: SQLitePool, size: int = KEPT_CONNECTIONS) -> None:
        self.__dict__.update(original.__dict__)  # the database path, its options, the memory reference
        self._idle: list[aiosqlite.Connection] = []
        self._size = size

    async def acquire(self) -> aiosqlite.Connection:
        while self._idle:
            connection = self._idle.pop()
            if _is_open(connection):
                return connection
        connection = aiosqlite.connect(database=self._database, isolation_level=None, **self._options)
        # A kept connection's thread must not keep the interpreter alive if the host never disconnects.
        thread = getattr(connection, "_thread", None)
        if thread is not None:
            thread.daemon = True
        await connection.__aenter__()
        return connection

    async def release(self, connection: aiosqlite.Connection) -> None:
        # A connection left inside a transaction (a failed request) is closed, never handed on.
        if len(self._idle) < self._size and _is_open(connection) and not connection.in_transaction:
            self._idle.append(connection)
            return
        await connection.__aexit__(None, None, None)

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            try:
                await connection.__aexit__(None, None, None)
            except Exception:  # closing is best effort: the process may be going down
                log.debug("pb_headless: closing a kept SQLite connection failed", exc_info=True)


def _is_open(connection: aiosqlite.Connection) -> bool:
    return bool(getattr(connection, "_running", True)) and getattr(connection, "_connection", 1) is not None


def keep_connections(backend: Any) -> None:
    """Swap the backend's pool for a kept-open one, and close the kept connections on disconnect."""
    if isinstance(backend._pool, KeptConnections):
        return
    pool = KeptConnections(backend._pool)
    backend._pool = pool
    disconnect = backend.disconnect

    async def disconnect_and_close() -> None:
        await pool.close()
        await disconnect()

    backend.disconnect = disconnect_and_close
