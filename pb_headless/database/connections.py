"""A task's database connection, released on every way out, and closed instead of reused when a
cancel left it in a state nobody knows (docs/hardening.md, "A stalled database").

A cancel (the database time limit, a client that went away) can land while a statement, a BEGIN or
a COMMIT is in flight. The driver would then wait for the server to finish before handing the
connection back to its pool, and a frozen server never finishes: the connection stays checked out
for good. Closing it at once ends the wait; the server rolls back whatever was not committed, and
the pool opens a new connection when it needs one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from databases import Database
from databases.core import Connection

from pb_headless.database import internals

log = logging.getLogger("pb_headless")
CANCEL_TIMEOUT = 5.0  # seconds a cancel request for a closed connection's statement may take
_cancels: set[asyncio.Task[None]] = set()  # kept until done: the loop holds tasks only weakly


@contextlib.asynccontextmanager
async def held_connection(database: Database) -> AsyncIterator[Connection]:
    """The task's connection (the one `database.connection()` gives every query of this task),
    released when the block ends, and closed first when the block was cancelled."""
    connection = database.connection()
    async with connection:
        try:
            yield connection
        except asyncio.CancelledError:
            discard(database, connection)
            raise


def discard(database: Database, connection: Connection) -> None:
    """Close the driver's connection now, without a word to the server, so that releasing it
    returns its place to the pool at once. SQLite's connections are files, not sockets: a
    cancelled statement finishes on its thread, and the connection stays usable."""
    dialect = database.url.dialect
    try:
        raw = connection.raw_connection
    except AssertionError:  # not acquired: nothing to close
        return
    if raw is None:
        return
    if dialect.startswith("postgres"):
        _cancel_statement(raw)
    with contextlib.suppress(Exception):  # already closed or detached from its pool
        if dialect.startswith("postgres"):
            raw.terminate()  # asyncpg: abort the socket, hand the holder back to the pool
        elif dialect in ("mysql", "mariadb"):
            raw.close()  # aiomysql: close the socket; the pool drops a closed connection
        else:
            return
        log.info("pb_headless: closed a %s connection whose work was cut off", dialect)


def _cancel_statement(raw: Any) -> None:
    """Ask PostgreSQL to stop the statement in flight, as psql's Ctrl-C does (a cancel request on a
    socket of its own): a busy server notices a closed client only when it next writes to it, so a
    costly query would otherwise run to its end. Sent in the background, given up after
    CANCEL_TIMEOUT (a frozen server never answers); harmless when nothing is running."""
    try:
        request = internals.asyncpg_cancel_request(raw)
    except Exception:  # an asyncpg that moved what the cancel reads (tests/unit/test_internals.py)
        log.exception("pb_headless: could not ask PostgreSQL to stop a cut-off statement")
        return
    if request is None:
        return
    task = asyncio.ensure_future(_bounded(request))
    _cancels.add(task)
    task.add_done_callback(_cancels.discard)


async def _bounded(request: Coroutine[Any, Any, None]) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(request, CANCEL_TIMEOUT)
