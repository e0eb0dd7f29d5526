"""`UnitOfWork.run(..., eager=True)` (and `within`, a unit of its own): work that never waits runs in
the caller with no task made; work that waits carries on in a task of its own, under the same time
limit, with its `databases` connection and its context handed over (docs/performance.md, "The fixed
cost of a request")."""

from __future__ import annotations

import asyncio
import contextvars
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from databases import Database

from pb_headless.database import internals
from pb_headless.database.deadline import OUTCOME_UNKNOWN, TOO_SLOW, UnitOfWork, within
from pb_headless.errors import ServiceUnavailable

mark: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="")


@pytest.fixture
async def database() -> AsyncIterator[Database]:
    with tempfile.TemporaryDirectory() as folder:
        found = Database(f"sqlite:///{Path(folder) / 'eager.db'}")
        await found.connect()
        try:
            yield found
        finally:
            await found.disconnect()


async def test_work_that_never_waits_runs_in_the_caller(database: Database) -> None:
    caller = asyncio.current_task()
    seen: list[asyncio.Task[object] | None] = []

    async def work() -> int:
        seen.append(asyncio.current_task())
        mark.set("work")
        return 7

    assert await within(1.0, work(), eager=database) == 7
    assert seen == [caller]
    assert mark.get() == "", "the work's context is its own, as in a task"


async def test_work_that_waits_carries_on_in_a_task_with_its_connection(database: Database) -> None:
    caller = asyncio.current_task()
    tasks: list[asyncio.Task[object] | None] = []

    async def work() -> list[object]:
        connection = database.connection()  # kept for the running task (the caller, for now)
        mark.set("work")
        tasks.append(asyncio.current_task())
        await asyncio.sleep(0)  # the first wait: from here on, a task of its own
        tasks.append(asyncio.current_task())
        assert database.connection() is connection, "the connection went with the work"
        assert mark.get() == "work", "so did its context"
        async with connection:
            return list(await connection.fetch_all("SELECT 1"))

    rows = await within(1.0, work(), eager=database)
    assert len(rows) == 1
    assert tasks[0] is caller and tasks[1] is not caller
    assert internals.held_by_task(database) is None, "nothing is left on the caller"
    assert mark.get() == ""


async def test_work_that_waits_too_long_is_cut_off(database: Database) -> None:
    ended = asyncio.Event()

    async def work() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            ended.set()

    with pytest.raises(ServiceUnavailable) as raised:
        await within(0.05, work(), eager=database)
    assert raised.value.message == TOO_SLOW
    await asyncio.wait_for(ended.wait(), 5)  # the abandoned work was cancelled


async def test_a_commit_begun_in_the_first_step_is_known(database: Database) -> None:
    unit = UnitOfWork(database, 0.05)

    async def work() -> None:
        with unit.committing():
            await asyncio.sleep(30)

    with pytest.raises(ServiceUnavailable) as raised:
        await unit.run(work(), eager=True)
    assert raised.value.message == OUTCOME_UNKNOWN


async def test_errors_of_the_first_step_propagate(database: Database) -> None:
    async def work() -> None:
        raise LookupError("no")

    with pytest.raises(LookupError):
        await within(1.0, work(), eager=database)


async def test_a_task_holding_a_connection_starts_its_work_in_a_task(database: Database) -> None:
    caller = asyncio.current_task()

    async def work() -> bool:
        return asyncio.current_task() is caller

    async with database.connection():
        assert await within(1.0, work(), eager=database) is False  # as without `eager`
