"""What one search may cost: a time budget per statement, enforced by the database, and a fair share
of concurrent searches per token (docs/hardening.md, "Searches").

A search whose words are common, or match nothing, can make the database test every row; the bounds
on words and fields count words, not the rows they reach. So each statement of a search runs under a
budget the database itself enforces, far below the request's time limit: SQLite's `interrupt` from a
timer (SQLite lets any thread stop a running statement), PostgreSQL's `statement_timeout` and
MariaDB's `max_statement_time` for the session, set before and reset after. A statement stopped at its
budget raises `OverBudget`; the caller answers with an estimate (a count) or a 422 (a page), never a
503. The budget applies to the connection the request's task holds, so nothing of it outlives the
statement.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from databases import Database

from pb_headless.database import internals
from pb_headless.database.database_errors import is_over_budget
from pb_headless.database.dialect import dialect_of
from pb_headless.errors import RateLimited

PAGE_BUDGET = 2.0  # seconds a search's page statement may run: past it, 422
COUNT_BUDGET = 1.0  # seconds a search's count may run: past it, an estimate
SEARCHES_PER_TOKEN = 2  # searches one token may have running at once on one instance: past it, 429


class OverBudget(Exception):
    """The database stopped the statement at its budget."""


@contextlib.asynccontextmanager
async def statement_budget(database: Database, seconds: float) -> AsyncIterator[None]:
    """Statements run inside are stopped by the database after `seconds` each (`OverBudget`)."""
    dialect = dialect_of(database).name
    connection = database.connection()
    async with connection:
        raw = internals.driver(connection)
        timer = await _start(raw, dialect, seconds)
        try:
            yield
        except Exception as error:
            if is_over_budget(error):
                raise OverBudget() from error
            raise
        finally:
            if timer is not None:
                timer.cancel()
            await _reset(raw, dialect)


class _Interrupter:
    """Interrupts the SQLite connection at the deadline and every `AGAIN` seconds after it, until
    cancelled: an interrupt that finds no statement running is lost, and one may start just after."""

    AGAIN = 0.005

    def __init__(self, interrupt: Any, seconds: float) -> None:
        self._interrupt = interrupt
        self._handle = asyncio.get_running_loop().call_later(seconds, self._fire)

    def _fire(self) -> None:
        self._interrupt()
        self._handle = asyncio.get_running_loop().call_later(self.AGAIN, self._fire)

    def cancel(self) -> None:
        self._handle.cancel()


async def _start(raw: Any, dialect: str, seconds: float) -> _Interrupter | None:
    seconds = max(seconds, 0.001)  # 0 would mean "no limit" to both servers
    if dialect == "sqlite":
        interrupt = internals.sqlite_interrupt(raw)
        return None if interrupt is None else _Interrupter(interrupt, seconds)
    if dialect == "postgresql":
        await raw.execute(f"SET statement_timeout = {int(seconds * 1000)}")
    elif dialect == "mysql":
        async with raw.cursor() as cursor:
            await cursor.execute(f"SET SESSION max_statement_time = {seconds:.3f}")
    return None


async def _reset(raw: Any, dialect: str) -> None:
    # A connection closed or in a failed transaction keeps nothing: its rollback undoes the SET.
    with contextlib.suppress(Exception):
        if dialect == "postgresql" and not raw.is_closed() and not raw.is_in_transaction():
            await raw.execute("RESET statement_timeout")
        elif dialect == "mysql":
            async with raw.cursor() as cursor:
                await cursor.execute("SET SESSION max_statement_time = DEFAULT")


class SearchShares:
    """How many searches each token has running on this instance; past `SEARCHES_PER_TOKEN`, 429.
    Holds only tokens with a search running (an entry goes when its last search ends)."""

    def __init__(self, per_token: int = SEARCHES_PER_TOKEN) -> None:
        self.per_token = per_token
        self._running: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._running)

    @contextlib.contextmanager
    def share(self, token: str) -> Iterator[None]:
        running = self._running.get(token, 0)
        if running >= self.per_token:
            raise RateLimited(1, "This token has as many searches running as it may; retry in 1 second.")
        self._running[token] = running + 1
        try:
            yield
        finally:
            left = self._running[token] - 1
            if left:
                self._running[token] = left
            else:
                del self._running[token]
