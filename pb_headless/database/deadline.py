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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import weakref
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar, cast

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


async def within(seconds: float, work: Coroutine[Any, Any, T]) -> T:
    """The result of `work`; `ServiceUnavailable` when it takes longer than `seconds` or when the
    database is unreachable. Any other exception of `work` propagates unchanged."""
    task = asyncio.ensure_future(work)
    progress = _progress.setdefault(task, _Progress())
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
    return None if task is None else _progress.get(task)


def _wake(waiter: asyncio.Future[None], *_: object) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _forget(task: asyncio.Task[Any]) -> None:
    """Collect what an abandoned task ended with, so asyncio does not report it as never retrieved."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("pb_headless: abandoned database work ended with %r", task.exception())
