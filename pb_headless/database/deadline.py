"""The database time limit: a request's database work finishes within it, or the request answers 503.

The work runs in a task of its own and is abandoned, not awaited, when the limit passes: a frozen
server may not even let a connection be released, and the client must hear back within the bound
whatever the cleanup does. `databases` gives every task a connection of its own, so the work's
queries share one connection; the cancel closes it (`connections.py`) so that it goes back to the
pool at once, never in a state nobody knows.

What the client hears depends on how far a write got (docs/writes.md, "When the outcome is
unknown"): cut before its COMMIT was sent, nothing was written; cut while the COMMIT was under way,
nobody can know; the COMMIT confirmed, the answer is a success whenever it was ready (only giving
the connection back was slow).

Most SQLite reads never wait at all (docs/performance.md, "Reads on the loop"): the token, the record
and the page are read on the loop's own thread. For those, a task, a timer and three turns of the
event loop per request cost more than the read. Work started with `eager=database` therefore runs
its first step at once, in the caller (as Python 3.12's eager tasks do): done without waiting, it
answers with nothing else made. Only when it has to wait does it become a task of its own and the
time limit apply as above, with what the first step set up handed over: its `databases` connection
(kept per task) and its context.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import weakref
from collections.abc import Coroutine, Generator, Iterator
from typing import Any, TypeVar, cast

from pb_headless.database import internals
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


class _Progress:
    """How far an abandoned work got: its commit (none, sent, confirmed) and its answer."""

    __slots__ = ("answer", "commit")

    def __init__(self) -> None:
        self.commit = ""
        self.answer: Any = _NO_ANSWER


_NO_ANSWER: Any = object()
_progress: weakref.WeakKeyDictionary[asyncio.Task[Any], _Progress] = weakref.WeakKeyDictionary()


async def within(seconds: float, work: Coroutine[Any, Any, T], *, eager: Any = None) -> T:
    """The result of `work`; `ServiceUnavailable` when it takes longer than `seconds` or when the
    database is unreachable. Any other exception of `work` propagates unchanged.

    With `eager` (the `databases.Database` the work uses), the work's first step runs at once in the
    caller, and only work that has to wait gets a task and a timer. For work that binds nothing but
    its `databases` connection to the running task before its first wait (no `asyncio.timeout`, no
    anyio scope): the API's own reads, not integrators' code."""
    global _starting
    if eager is None or internals.held_by_task(eager) is not None:
        task = asyncio.ensure_future(work)
        return await _bounded(seconds, task, _progress.setdefault(task, _Progress()))
    caller = asyncio.current_task()
    progress = _Progress()
    context = contextvars.copy_context()  # the work's own, as a task of its own would have
    outer, _starting = _starting, (caller, progress)
    try:
        waiting = context.run(work.send, None)
    except StopIteration as done:  # finished without waiting: no task, no timer
        return done.value
    except asyncio.CancelledError:  # as `_bounded`: a cancel not its own (a wait shared with cut-off work)
        raise ServiceUnavailable(TOO_SLOW) from None
    except Exception as error:
        if is_unavailable(error):
            raise ServiceUnavailable(UNAVAILABLE) from error
        raise
    finally:
        _starting = outer
    task = asyncio.get_running_loop().create_task(_Resumed(work, waiting), context=context)
    internals.hand_over_connection(eager, caller, task)  # the rest of the work runs in `task`
    _progress[task] = progress
    return await _bounded(seconds, task, progress)


async def _bounded(seconds: float, task: asyncio.Task[T], progress: _Progress) -> T:
    loop = task.get_loop()
    waiter = loop.create_future()  # done when the work is, or when the time is up
    timer = loop.call_at(loop.time() + seconds, _wake, waiter)
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
        task.cancel()  # closes its connection (connections.py): the pool gets its place back now
        task.add_done_callback(_forget)
        return cast(T, _late(progress))
    if task.cancelled():  # ended by a cancel not its own (a wait it shared with cut-off work)
        raise ServiceUnavailable(TOO_SLOW)
    try:
        return task.result()
    except Exception as error:
        if is_unavailable(error):
            raise ServiceUnavailable(UNAVAILABLE) from error
        raise


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
_starting: tuple[asyncio.Task[Any] | None, _Progress] | None = None  # the eager first step running now


def _late(progress: _Progress) -> Any:
    """The answer of work cut off by the time limit, as exact as its progress allows."""
    if progress.answer is not _NO_ANSWER:  # only giving the connection back was slow
        return progress.answer
    if progress.commit == "confirmed":
        raise ServiceUnavailable(STORED_UNANSWERED)
    if progress.commit == "sent":
        raise ServiceUnavailable(OUTCOME_UNKNOWN)
    raise ServiceUnavailable(TOO_SLOW)


@contextlib.contextmanager
def committing() -> Iterator[None]:
    """Around a COMMIT: if the time limit cuts the work inside, the write's outcome is unknown;
    once the block has ended, the write is stored."""
    progress = _current()
    if progress is not None:
        progress.commit = "sent"
    yield
    if progress is not None:
        progress.commit = "confirmed"


def answered(answer: Any) -> None:
    """The work's answer is ready: a stall after this (releasing the connection) cannot lose it."""
    progress = _current()
    if progress is not None:
        progress.answer = answer


def _current() -> _Progress | None:
    task = asyncio.current_task()
    if _starting is not None and _starting[0] is task:  # inside an eager first step (`_eagerly`)
        return _starting[1]
    return None if task is None else _progress.get(task)


def _wake(waiter: asyncio.Future[None], *_: object) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _forget(task: asyncio.Task[Any]) -> None:
    """Collect what an abandoned task ended with, so asyncio does not report it as never retrieved."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("pb_headless: abandoned database work ended with %r", task.exception())
