"""Kept-open SQLite connections for the host's `databases.Database`, and short reads on the loop.

`databases`' SQLite backend opens a new aiosqlite connection, with a thread of its own, on every
acquisition and closes it on release: about a millisecond of CPU per request before any query runs,
and a cold page cache every time. This pool keeps released connections open (a few per process) and
hands them out again; everything else about the backend stays as `databases` made it.

Every statement aiosqlite runs still crosses to the connection's thread and back: two thread
switches, more CPU than a look-up by key takes. `InlineReads` runs the statements every request
makes (the token look-up, a record by id, a page) on the event loop's own thread instead, on a
read-only connection of its own, each within `INLINE_BUDGET` seconds: a read that needs longer is
interrupted and run on the request's connection as before, and so is a read that finds the database
locked by a writer. Nothing waits on the loop thread, so one slow read never stalls the others.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite
from databases.backends.sqlite import SQLitePool

log = logging.getLogger("pb_headless")

KEPT_CONNECTIONS = 8  # idle connections kept per process; more are opened under load, then closed
INLINE_BUDGET = 0.0005  # seconds a read may hold the event loop before it goes to a thread instead
CHECK_EVERY = 500  # SQLite VM steps between two looks at the clock
# A statement that ran over its budget runs on the thread this many times, then is tried again.
RETRY_AFTER = 64


class KeptConnections(SQLitePool):
    """A `SQLitePool` whose released connections stay open for the next acquisition."""

    def __init__(self, original: SQLitePool, size: int = KEPT_CONNECTIONS) -> None:
        self.__dict__.update(original.__dict__)  # the database path, its options, the memory reference
        self._idle: list[aiosqlite.Connection] = []
        self._size = size
        self.inline = InlineReads(self._database, self._options) if _on_disk(self) else None

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
        if self.inline is not None:
            self.inline.close()
        idle, self._idle = self._idle, []
        for connection in idle:
            try:
                await connection.__aexit__(None, None, None)
            except Exception:  # closing is best effort: the process may be going down
                log.debug("pb_headless: closing a kept SQLite connection failed", exc_info=True)


class InlineReads:
    """Reads run on the calling thread, on one read-only connection, each within `INLINE_BUDGET`.

    `fetchall` answers None when the read is not done here (it took too long, the database is locked
    by a writer, another thread is using the connection, or SQLite refused it for any reason): the
    caller then runs it on the request's own connection, which waits, retries and reports errors as
    every other statement does. Only committed data is read here, so the caller must not use it
    inside a transaction of its own.
    """

    def __init__(self, database: str, options: dict[str, Any]) -> None:
        self._database = database
        # No busy wait (a locked database goes to the thread, which waits), no thread check (the
        # lock below keeps it to one caller at a time), autocommit, and no writes at all.
        self._options = {
            **options,
            "timeout": 0,
            "check_same_thread": False,
            "isolation_level": None,
        }
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._deadline = 0.0
        self._over: dict[str, int] = {}  # SQL that ran over its budget → runs left on the thread

    def fetchall(self, sql: str, arguments: Sequence[Any]) -> list[Any] | None:
        over = self._over.get(sql)
        if over is not None:
            if over <= 1:
                del self._over[sql]
            else:
                self._over[sql] = over - 1
            return None
        if not self._lock.acquire(blocking=False):
            return None
        try:
            connection = self._connection or self._open()
            self._deadline = time.perf_counter() + INLINE_BUDGET
            return connection.execute(sql, arguments).fetchall()
        except sqlite3.OperationalError as error:
            if str(error) == "interrupted":
                self._over[sql] = RETRY_AFTER
            return None
        except sqlite3.Error:
            return None
        finally:
            self._lock.release()

    def data_version(self) -> int | None:
        """SQLite's `PRAGMA data_version`: it changes whenever another connection, of this process or
        any other, commits; this one writes nothing, so it moves with every write. None when it
        cannot be read here now."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            connection = self._connection or self._open()
            self._deadline = time.perf_counter() + INLINE_BUDGET
            return int(connection.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            return None
        finally:
            self._lock.release()

    def close(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self._database, **self._options)
        connection.execute("PRAGMA query_only = ON")
        connection.set_progress_handler(self._past_deadline, CHECK_EVERY)
        self._connection = connection
        return connection

    def _past_deadline(self) -> int:
        return 1 if time.perf_counter() > self._deadline else 0


def inline_reads(database: Any) -> InlineReads | None:
    """The loop-thread reader of this `databases.Database`: there is one for a SQLite file with kept
    connections, none otherwise."""
    return getattr(getattr(database._backend, "_pool", None), "inline", None)


def reads_inline(database: Any) -> bool:
    """Whether this `databases.Database` reads on the loop's thread (a SQLite file with kept connections)."""
    return inline_reads(database) is not None


def _on_disk(pool: Any) -> bool:
    """A database every connection opens alike: a file, not a private or shared in-memory one."""
    database = str(pool._database)
    return not (
        pool._memref is not None
        or database in ("", ":memory:")
        or database.startswith("file:")
        or "mode=memory" in database
    )


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
