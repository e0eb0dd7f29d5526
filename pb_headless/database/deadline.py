"""The database time limit, held by one explicit unit of work per request: a request's database work
finishes within the limit, or the request answers 503.

A `UnitOfWork` is made for each request that touches the database (docs/architecture.md, "The unit of
work"). It owns three things, and nothing else finds them:

- its connection, acquired once (`held`) and released once, by the unit's own work;
- how far a write got: its commit (none, sent, confirmed) and its answer (`committing`, `answered`);
- the time limit: `run` starts the work and answers within `seconds`.

The work runs in a task of its own and is abandoned, not awaited, when the limit passes: a frozen
server may not even let a connection be released, and the client must hear back within the bound
whatever the cleanup does. The unit then cancels the task and discards its own connection at once
(`connections.py`), so that it goes back to the pool now, never in a state nobody knows; no task is
looked up to find either.

What the client hears depends on how far a write got (docs/writes.md, "When the outcome is
unknown"): cut before its COMMIT was sent, nothing was written; cut while the COMMIT was under way,
nobody can know; the COMMIT confirmed, the answer is a success whenever it was ready (only giving
the connection back was slow).

Most SQLite reads never wait at all (docs/performance.md, "Reads on the loop"): the token, the record
and the page are read on the loop's own thread. For those, a task, a timer and three turns of the
event loop per request cost more than the read. `run(work, eager=True)` therefore runs the work's
first step at once, in the caller (as Python 3.12's eager tasks do): done without waiting, it answers
with nothing else made. Only when it has to wait does it become a task of its own and the time limit
apply as above, with what the first step set up handed over: its `databases` connection (which
`databases` keeps per task, `internals.hand_over_connection`) and its context.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
from collections.abc import AsyncIterator, Coroutine, Generator, Iterator
from typing import Any, TypeVar, cast

from databases import Database
from databases.core import Connection

from pb_headless.database import internals
from pb_headless.database.connections import discard
from pb_headless.database.database_errors import is_unavailable
from pb_headless.errors import ServiceUnavailable

log = logging.getLogger("pb_headless")
T = TypeVar("T")

UNAVAILABLE = "The database is not available right now; try again shortly."
TOO_SLOW = "The database did not answer in time; try again shortly."
OUTCOME_UNKNOWN = (
    "The database did not confirm the write in time: it may or may not have been stored. "
    "Read the record before writing it again; a retry with the same Idempotency-Key is safe."
)
STORED_UNANSWERED = (
    "The write was stored, but the database did not answer in time to return it; "
    "read the record instead of writing it again."
)
_NO_ANSWER: Any = object()


async def within(seconds: float, work: Coroutine[Any, Any, T], *, eager: Database | None = None) -> T:
    """`work` run as a unit of its own (work that keeps no commit progress: a token check, a probe);
    `eager`, the database its first step may run at once on (`UnitOfWork.run`)."""
    return await UnitOfWork(eager, seconds).run(work, eager=eager is not None)


class UnitOfWork:
    """One request's database work: its connection, its commit progress and its answer, under a time
    limit of `seconds`. Made per request, used by one request, never shared. `database` may be None
    for work that holds no connection of the unit's and never starts eagerly."""

    __slots__ = ("answer", "commit", "connection", "database", "seconds")

    def __init__(self, database: Database | None, seconds: float) -> None:
        self.database = database
        self.seconds = seconds
        self.connection: Connection | None = None  # while `held` holds it
        self.commit = ""  # "", "sent", "confirmed"
        self.answer: Any = _NO_ANSWER

    async def run(self, work: Coroutine[Any, Any, T], *, eager: bool = False) -> T:
        """The result of `work`; `ServiceUnavailable` when it takes longer than the unit's limit or
        when the database is unreachable. Any other exception of `work` propagates unchanged.

        `eager`: the work's first step runs at once in the caller, and only work that has to wait
        gets a task and a timer. For work that binds nothing but its `databases` connection to the
        running task before its first wait (no `asyncio.timeout`, no anyio scope): the API's own
        reads, not integrators' code."""
        database = self.database
        if not eager or database is None or internals.held_by_task(database) is not None:
            return await self._bounded(asyncio.ensure_future(work))
        caller = asyncio.current_task()
        context = contextvars.copy_context()  # the work's own, as a task of its own would have
        try:
            waiting = context.run(work.send, None)
        except StopIteration as done:  # finished without waiting: no task, no timer
            return cast(T, done.value)
        except asyncio.CancelledError:  # a cancel not its own (a wait shared with cut-off work)
            raise ServiceUnavailable(TOO_SLOW) from None
        except Exception as error:
            if is_unavailable(error):
                raise ServiceUnavailable(UNAVAILABLE) from error
            raise
        task = asyncio.get_running_loop().create_task(_Resumed(work, waiting), context=context)
        internals.hand_over_connection(database, caller, task)  # the rest of the work runs in `task`
        return await self._bounded(task)

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[Connection]:
        """The unit's connection for every query of its work (the one `databases` gives the work's
        task), acquired here and released when the block ends; closed first when the block was cut
        off, so that the pool gets its place back at once."""
        assert self.database is not None, "a unit without a database holds no connection"
        connection = self.database.connection()
        async with connection:
            self.connection = connection
            try:
                yield connection
            except asyncio.CancelledError:
                self._discard()
                raise
            finally:
                self.connection = None

    @contextlib.contextmanager
    def committing(self) -> Iterator[None]:
        """Around a COMMIT: if the time limit cuts the work inside, the write's outcome is unknown;
        once the block has ended, the write is stored."""
        self.commit = "sent"
        yield
        self.commit = "confirmed"

    def answered(self, answer: Any) -> None:
        """The work's answer is ready: a stall after this (releasing the connection) cannot lose it."""
        self.answer = answer

    async def _bounded(self, task: asyncio.Task[T]) -> T:
        loop = task.get_loop()
        waiter = loop.create_future()  # done when the work is, or when the time is up
        timer = loop.call_at(loop.time() + self.seconds, _wake, waiter)
        wake = functools.partial(_wake, waiter)
        task.add_done_callback(wake)
        try:
            await waiter
        except asyncio.CancelledError:  # the client went away: so does its work
            task.cancel()
            raise
        finally:
            timer.cancel()
            task.remove_done_callback(wake)
        if not task.done():
            task.cancel()
            self._discard()  # the pool gets its place back now, whatever the task's cleanup does
            task.add_done_callback(_forget)
            return cast(T, self._late())
        if task.cancelled():  # ended by a cancel not its own (a wait it shared with cut-off work)
            raise ServiceUnavailable(TOO_SLOW)
        try:
            return task.result()
        except Exception as error:
            if is_unavailable(error):
                raise ServiceUnavailable(UNAVAILABLE) from error
            raise

    def _discard(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None and self.database is not None:
            discard(self.database, connection)

    def _late(self) -> Any:
        """The answer of work cut off by the time limit, as exact as its progress allows."""
        if self.answer is not _NO_ANSWER:  # only giving the connection back was slow
            return self.answer
        if self.commit == "confirmed":
            raise ServiceUnavailable(STORED_UNANSWERED)
        if self.commit == "sent":
            raise ServiceUnavailable(OUTCOME_UNKNOWN)
        raise ServiceUnavailable(TOO_SLOW)


class _Resumed(Coroutine[Any, Any, Any]):
    """A coroutine already started and waiting on `waiting`, as a task's coroutine: the task's first
    step hands it `waiting` to wait on (as the work's own first step would have), and every later
    step, cancels included, goes to the work."""

    __slots__ = ("_waiting", "_work")

    def __init__(self, work: Coroutine[Any, Any, Any], waiting: Any) -> None:
        self._work = work
        self._waiting: Any = waiting

    def send(self, value: Any) -> Any:
        waiting = self._waiting
        if waiting is not _RESUMED:
            self._waiting = _RESUMED
            return waiting
        return self._work.send(value)

    def throw(self, *error: Any) -> Any:
        self._waiting = _RESUMED
        return self._work.throw(*error)

    def close(self) -> None:
        self._work.close()

    def __await__(self) -> Generator[Any, None, Any]:
        raise TypeError("a resumed database work runs as a task, it is not awaited")


_RESUMED: Any = object()


@contextlib.contextmanager
def committing(unit: UnitOfWork | None) -> Iterator[None]:
    """`unit.committing()`, or nothing for a write made outside a request's unit (a command)."""
    if unit is None:
        yield
        return
    with unit.committing():
        yield


def _wake(waiter: asyncio.Future[None], *_: object) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _forget(task: asyncio.Task[Any]) -> None:
    """Collect what an abandoned task ended with, so asyncio does not report it as never retrieved."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("pb_headless: abandoned database work ended with %r", task.exception())
