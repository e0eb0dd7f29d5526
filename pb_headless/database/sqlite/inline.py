"""Short SQLite reads on the event loop's own thread, bounded by time and by the bytes they return.

Every statement aiosqlite runs crosses to the connection's thread and back: two thread switches,
more CPU than a look-up by key takes. `InlineReads` runs the statements every request makes (the
token look-up, a record by id, a page) on the loop's thread instead, on a read-only connection of
its own. Two bounds keep one read from holding the loop (docs/performance.md, "Reads on the loop"):

- time: SQLite's progress handler interrupts the read past `INLINE_BUDGET` seconds, counted every
  `CHECK_EVERY` VM steps;
- size: rows are copied out a few at a time, and the read stops once they hold more than
  `INLINE_BYTES` of text and bytes. Copying a long row is one VM step, which the clock cannot
  interrupt; the size bound can, after at most one row past it.

A read stopped either way, or one that finds the database locked by a writer, is answered None and
run on the request's connection (on aiosqlite's thread) as before; its SQL goes there directly for
the next `RETRY_AFTER` runs. Nothing waits on the loop thread, so one slow read never stalls others.

Reads a caller asks to share (`share`: a list's change-log positions and its page, api/reads.py)
run in one read transaction (docs/performance.md, "A page's own cost"): the first opens it (`BEGIN`;
SQLite takes its shared lock at the first statement), and `unshare` ends it, or, should the caller
wait on anything before, a callback the loop runs before anything scheduled after it (`call_soon`).
They are then read under one lock from one committed state, and SQLite's data version is read once:
each statement on its own took the lock, looked for a journal and read the file's header again. The
transaction never outlives the step of the loop that opened it, so no read of a later request, and no
writer waiting on the lock for longer than that step, depends on it.

A request never joins a read transaction begun before it (`arrived`): an in-process caller may have
written just before with a connection of its own. In WAL mode too, a statement no caller shares reads
on its own: a read transaction around every request's reads cost more than it saved (docs/performance.md,
"One snapshot per request in WAL mode").
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import sqlite3
import threading
import time
from collections.abc import Sequence
from typing import Any

INLINE_BUDGET = 0.0005  # seconds a read may hold the event loop before it goes to a thread instead
INLINE_BYTES = 64 * 1024  # characters and bytes a read may copy out on the loop before it goes too
CHECK_EVERY = 500  # SQLite VM steps between two looks at the clock
BATCH = 16  # rows copied out between two looks at the size
# A statement that ran over a bound runs on the thread this many times, then is tried again.
RETRY_AFTER = 64
KEPT_OVER = 256  # statements remembered as over a bound (oldest forgotten first)
_OPENINGS = itertools.count(1)  # numbers each reader connection this process opens
_ZERO = itertools.repeat(0)  # `length_hint`'s answer for a value without a length


class InlineReads:
    """Reads run on the calling thread, on one read-only connection, each within both bounds.

    `fetchall` answers None when the read is not done here (it took too long or returned too much,
    the database is locked by a writer, another thread is using the connection, or SQLite refused
    it for any reason): the caller then runs it on the request's own connection, which waits,
    retries and reports errors as every other statement does. Only committed data is read here, so
    the caller must not use it inside a transaction of its own.
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
        self._reader: sqlite3.Connection | None = None
        self._opening = 0  # which connection `_reader` is (`_OPENINGS`): data versions are per connection
        self._lock = threading.Lock()
        self._wanted: asyncio.AbstractEventLoop | None = None  # the loop whose reads are shared now
        self._held: asyncio.AbstractEventLoop | None = None  # the loop whose read transaction is open
        self._version: int | None = None  # the data version read in the open read transaction
        self._arrivals = 0  # requests begun so far (`arrived`)
        self._begun_at = 0  # `_arrivals` when the open read transaction began
        self._deadline = 0.0
        self._over: dict[str, int] = {}  # SQL that ran over a bound → runs left on the thread
        self.over_time = 0  # reads handed to the thread by the clock, and by their size
        self.over_size = 0

    @property
    def is_open(self) -> bool:
        return self._reader is not None

    def fetchall(self, sql: str, arguments: Sequence[Any]) -> list[Any] | None:
        if self._skips(sql):
            return None
        if not self._lock.acquire(blocking=False):
            return None
        try:
            connection = self._reading()
            if connection is None:
                return None
            self._deadline = time.perf_counter() + INLINE_BUDGET
            rows = _within_size(connection.execute(sql, arguments))
            if rows is None:
                self.over_size += 1
                self._remember_over(sql)
            return rows
        except sqlite3.OperationalError as error:
            if str(error) == "interrupted":
                self.over_time += 1
                self._remember_over(sql)
            return None
        except sqlite3.Error:
            return None
        finally:
            self._lock.release()

    def is_over(self, sql: str) -> bool:
        """Whether this SQL goes to the thread now, for having run over a bound."""
        return sql in self._over

    def data_version(self) -> int | None:
        """SQLite's `PRAGMA data_version`: it changes whenever another connection, of this process or
        any other, commits; this one writes nothing, so it moves with every write. None when it
        cannot be read here now."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            connection = self._reading()
            if connection is None:
                return None
            if self._version is not None and connection.in_transaction:
                return self._version  # no commit lands inside a read transaction
            self._deadline = time.perf_counter() + INLINE_BUDGET
            version = int(connection.execute("PRAGMA data_version").fetchone()[0])
            if connection.in_transaction:
                self._version = version
            return version
        except sqlite3.Error:
            return None
        finally:
            self._lock.release()

    def steady_version(self) -> tuple[int, int] | None:
        """`data_version` with the connection it was read on: two connections' data versions do not
        compare, so rows kept at one version of a closed connection never match a new one's."""
        version = self.data_version()
        return None if version is None else (self._opening, version)

    def close(self) -> None:
        with self._lock:
            connection, self._reader = self._reader, None
            self._wanted = self._held = self._version = None
        if connection is not None:
            connection.close()

    def share(self) -> None:
        """The reads that follow, in this step of the running loop, share one read transaction."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        with self._lock:
            if self._wanted is None:
                self._wanted = loop
                loop.call_soon(self._end_step)  # at the latest when this step ends

    def unshare(self) -> None:
        """Ends the shared reads."""
        self._end_step()

    def _end_step(self) -> None:
        """Ends the shared reads: releases SQLite's shared lock, so a writer may commit. Those of
        another thread's running loop are left to it."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            owner = self._held or self._wanted
            if owner is not None and owner is not loop and owner.is_running():
                return
            self._end()

    def _end(self) -> None:
        """Ends the shared reads here and now. Called with `_lock` held."""
        connection = self._reader
        self._wanted = self._held = self._version = None
        if connection is not None and connection.in_transaction:
            try:
                connection.execute("COMMIT")
            except sqlite3.Error:
                connection.close()  # a connection that cannot end its transaction is not kept
                self._reader = None

    def arrived(self) -> None:
        """A request has begun: its reads see no state older than now. A read transaction opened
        before is not joined, but ended and begun again (an in-process caller may have written
        since, and not through this loop)."""
        self._arrivals += 1

    def _reading(self) -> sqlite3.Connection | None:
        """The connection, inside the shared read transaction when reads are shared now (opened here
        by the first); None while another thread's loop holds one open. Called with `_lock` held."""
        connection = self._reader or self._open()
        if self._held is None and self._wanted is None:
            return connection  # the usual case: each statement reads on its own
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        held = self._held
        if held is loop and self._begun_at != self._arrivals:
            self._end()  # begun before a request that may be the one reading now
            held = None
            if self._reader is None:
                return None
        if held is not None:
            if held is loop:
                return connection
            if held.is_running():  # another thread's loop, in the middle of its shared reads
                return None
            # Left open by a loop that stopped before its callback ran.
            self._held = self._wanted = self._version = None
            if connection.in_transaction:
                connection.execute("ROLLBACK")
        if loop is not None and self._wanted is loop:
            if not connection.in_transaction:
                connection.execute("BEGIN")
                self._begun_at = self._arrivals
            self._held = loop
        return connection

    def _skips(self, sql: str) -> bool:
        left = self._over.get(sql)
        if left is None:
            return False
        if left <= 1:
            del self._over[sql]
        else:
            self._over[sql] = left - 1
        return True

    def _remember_over(self, sql: str) -> None:
        self._over[sql] = RETRY_AFTER
        while len(self._over) > KEPT_OVER:
            del self._over[next(iter(self._over))]

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self._database, **self._options)
        connection.execute("PRAGMA query_only = ON")
        connection.set_progress_handler(self._past_deadline, CHECK_EVERY)
        self._reader = connection
        self._opening = next(_OPENINGS)
        return connection

    def _past_deadline(self) -> int:
        return 1 if time.perf_counter() > self._deadline else 0


def _within_size(cursor: sqlite3.Cursor) -> list[Any] | None:
    """The cursor's rows, or None once they hold more than `INLINE_BYTES` of text and bytes."""
    rows: list[Any] = []
    size = 0
    while True:
        batch = cursor.fetchmany(BATCH)
        # SQLite's values are int, float, str, bytes or None: only text and bytes have a length, and
        # `length_hint` gives theirs, 0 for the others, the whole batch in one call (no loop in Python).
        size += sum(map(operator.length_hint, itertools.chain.from_iterable(batch), _ZERO))
        if size > INLINE_BYTES:
            cursor.close()
            return None
        rows += batch
        if len(batch) < BATCH:  # the last batch: no call more to hear that there is none
            return rows
