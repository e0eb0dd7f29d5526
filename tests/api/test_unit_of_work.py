"""The unit of work's time limit closes the unit's own connection at once (database/deadline.py,
docs/architecture.md "The unit of work"): before the cut-off work's cleanup has run, on the servers
where a connection is a socket (SQLite's cut-off statement finishes on its thread, and its
connection stays usable: tests/api/test_stalls.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from databases import Database

from pb_headless.database.deadline import TOO_SLOW, UnitOfWork
from pb_headless.errors import ServiceUnavailable
from tests.support.databases import open_database

SLEEPS = {"postgresql": "SELECT pg_sleep(5)", "mysql": "SELECT SLEEP(5)"}


@pytest.fixture(params=("postgresql", "mariadb"))
async def server_database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Database]:
    async with open_database(request.param, tmp_path_factory.mktemp("db")) as db:
        yield db


def _closed(raw: Any) -> bool:
    """aiomysql: the socket is closed; asyncpg: the connection is closed, or already back in its
    pool (terminating a pooled connection hands its place back at once)."""
    if not hasattr(raw, "is_closed"):
        return bool(raw.closed)
    try:
        return bool(raw.is_closed())
    except Exception as error:  # asyncpg's InterfaceError: "released back to the pool"
        return "released back to the pool" in str(error)


async def test_the_time_limit_closes_the_units_connection_at_once(server_database: Database) -> None:
    unit = UnitOfWork(server_database, 0.2)
    held: list[Any] = []

    async def work() -> None:
        async with unit.held() as connection:
            held.append(connection.raw_connection)
            await connection.execute(SLEEPS[server_database.url.dialect])

    with pytest.raises(ServiceUnavailable) as raised:
        await unit.run(work())
    assert raised.value.message == TOO_SLOW
    assert _closed(held[0]), "closed by the unit itself, not left to the cancelled task's cleanup"
    assert unit.connection is None
    assert await server_database.fetch_val("SELECT 1") == 1  # the pool serves on


async def test_a_units_answer_outlives_a_slow_release(server_database: Database) -> None:
    """An answer made before the time limit is the answer, even if the work then stalls."""
    unit = UnitOfWork(server_database, 0.2)

    async def work() -> str:
        async with unit.held() as connection:
            unit.answered("made")
            await connection.execute(SLEEPS[server_database.url.dialect])
        return "never"

    assert await unit.run(work()) == "made"
