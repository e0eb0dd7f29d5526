"""The database time limit: a request's database work finishes within it, or the request answers 503.

The work runs in a task of its own and is abandoned, not awaited, when the limit passes: a frozen
server may not even let a connection be released, and the client must hear back within the bound
whatever the cleanup does. `databases` gives every task a connection of its own, so the work's
queries share one connection and the abandoned task releases it when the server answers again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

from pb_headless.database.database_errors import is_unavailable
from pb_headless.errors import ServiceUnavailable

log = logging.getLogger("pb_headless")
T = TypeVar("T")

UNAVAILABLE = "The database is not available right now; try again shortly."
TOO_SLOW = "The database did not answer in time; try again shortly."


async def within(seconds: float, work: Coroutine[Any, Any, T]) -> T:
    """The result of `work`; `ServiceUnavailable` when it takes longer than `seconds` or when the
    database is unreachable. Any other exception of `work` propagates unchanged."""
    task = asyncio.ensure_future(work)
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
        task.cancel()
        task.add_done_callback(_forget)
        raise ServiceUnavailable(TOO_SLOW)
    try:
        return task.result()
    except Exception as error:
        if is_unavailable(error):
            raise ServiceUnavailable(UNAVAILABLE) from error
        raise


def _wake(waiter: asyncio.Future[None], *_: object) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _forget(task: asyncio.Task[Any]) -> None:
    """Collect what an abandoned task ended with, so asyncio does not report it as never retrieved."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("pb_headless: abandoned database work ended with %r", task.exception())
