"""A PostgreSQL that stalls inside BEGIN or COMMIT, or freezes, never costs the instance a connection
(docs/hardening.md, "A stalled database"): after twenty stalls the instance serves normally,
pg_stat_activity shows nothing left behind, and SIGTERM ends the server within its shutdown limit.
What a client hears about a write cut off by the time limit is exact where it can be
(docs/writes.md, "When the outcome is unknown").

Each test starts a PostgreSQL of its own (tests/support/private_postgres.py): COMMIT is made to hang
by naming a synchronous standby that does not exist, and the server is frozen with SIGSTOP.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from databases import Database

from pb_headless import TokenStore, install
from pb_headless.database.connections import held_connection
from pb_headless.database.deadline import OUTCOME_UNKNOWN, TOO_SLOW, within
from pb_headless.errors import ServiceUnavailable
from tests.support.demo import articles, create_demo, demo_registry
from tests.support.host import Host, build_host
from tests.support.private_postgres import NOBODY, PrivatePostgres, private_postgres
from tests.support.server import answers, free_port, running, uvicorn_command, wait_until

pytestmark = pytest.mark.slow

LIMIT = 0.6  # the database time limit of these hosts, in seconds
GUARD = 20.0  # a request or a close still open after this is hanging: the test fails instead
POOL = 4
APP_NAME = "pb-stall-host"
_titles = itertools.count(1)


@pytest.fixture
async def server() -> AsyncIterator[PrivatePostgres]:
    with private_postgres() as postgres:
        try:
            yield postgres
        finally:
            postgres.thaw()


@pytest.fixture
async def stalled(server: PrivatePostgres) -> AsyncIterator[tuple[Host, str]]:
    database = Database(server.url, min_size=1, max_size=POOL, server_settings={"application_name": APP_NAME})
    await database.connect()
    await install(database)
    await create_demo(database)
    host = await build_host(database, demo_registry(), database_timeout=LIMIT)
    plain = await host.token("*")
    # warm: the first request compiles the catalog, which may take longer than the short time limit
    assert (await create(host.client, host.auth(plain)))[1].status_code == 201
    try:
        yield host, plain
    finally:
        server.thaw()
        await host.client.aclose()
        await asyncio.wait_for(database.disconnect(), GUARD)


async def hanging_commits(server: PrivatePostgres, hang: bool) -> None:
    """Switch the hang and wait until a new session sees it (the pool's sessions reload at once)."""
    await server.hang_commits(hang)
    expected = NOBODY if hang else ""
    for _ in range(100):
        rows = await server.query("SHOW synchronous_standby_names")
        if rows[0][0] == expected:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)


async def create(client: httpx.AsyncClient, headers: dict[str, str]) -> tuple[str, httpx.Response]:
    title = f"stall {next(_titles)}"
    response = await asyncio.wait_for(
        client.post("/api/pb/v1/objects/articles", json={"title": title}, headers=headers), GUARD
    )
    return title, response


async def stall_rounds(
    server: PrivatePostgres, client: httpx.AsyncClient, headers: dict[str, str], rounds: int
) -> list[tuple[str, httpx.Response]]:
    """`rounds` times COMMIT hangs under three parallel creates, then `rounds` freezes under three
    creates and a list: every answer is a 503 saying what became of the write."""
    answered = []
    for _ in range(rounds):
        await hanging_commits(server, True)
        answered += await asyncio.gather(*(create(client, headers) for _ in range(3)))
        await hanging_commits(server, False)
    for _ in range(rounds):
        server.freeze()
        listing = asyncio.ensure_future(client.get("/api/pb/v1/objects/articles", headers=headers))
        answered += await asyncio.gather(*(create(client, headers) for _ in range(3)))
        assert (await asyncio.wait_for(listing, GUARD)).status_code == 503
        server.thaw()
    return answered


async def client_backends(server: PrivatePostgres, application: str | None) -> list[tuple[str, str]]:
    rows = await server.query(
        "SELECT state, application_name FROM pg_stat_activity "
        "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    return [(row[0], row[1]) for row in rows if application is None or row[1] == application]


async def settled(server: PrivatePostgres, application: str | None, most: int) -> list[tuple[str, str]]:
    """The host's backends once those whose client closed them have noticed and ended."""
    for _ in range(200):
        backends = await client_backends(server, application)
        if len(backends) <= most and all(state == "idle" for state, _ in backends):
            return backends
        await asyncio.sleep(0.05)
    return await client_backends(server, application)


async def stored_titles(server: PrivatePostgres) -> set[str]:
    rows = await server.query(f"SELECT title FROM {articles.name} WHERE title LIKE 'stall %'")
    return {row[0] for row in rows}


async def test_twenty_stalls_in_commit_and_freezes_leave_no_connection_behind(server, stalled):
    host, plain = stalled
    headers = host.auth(plain)
    answered = await stall_rounds(server, host.client, headers, rounds=10)

    statuses = [response.status_code for _, response in answered]
    assert set(statuses) == {503}, [response.text for _, response in answered if response.status_code != 503]
    messages = [response.json()["message"] for _, response in answered]
    assert set(messages) <= {TOO_SLOW, OUTCOME_UNKNOWN}
    # one write per round reaches its COMMIT (the others wait for the row lock it holds): unknown
    assert messages[:30].count(OUTCOME_UNKNOWN) >= 10
    lists = await asyncio.gather(
        *(host.client.get("/api/pb/v1/objects/articles", headers=headers) for _ in range(3 * POOL))
    )
    assert [response.status_code for response in lists] == [200] * (3 * POOL)
    assert [
        response.status_code
        for _, response in await asyncio.gather(*(create(host.client, headers) for _ in range(POOL)))
    ] == [201] * POOL
    backends = await settled(server, APP_NAME, POOL)
    assert len(backends) <= POOL and {state for state, _ in backends} <= {"idle"}, backends
    await asyncio.wait_for(host.database.disconnect(), GUARD)
    assert await settled(server, APP_NAME, 0) == []


async def test_a_write_cut_off_before_its_commit_was_not_stored(server, stalled):
    host, plain = stalled
    answered = await stall_rounds(server, host.client, host.auth(plain), rounds=2)
    stored = await stored_titles(server)
    not_written = {title for title, response in answered if response.json()["message"] == TOO_SLOW}
    assert not_written and not (not_written & stored)


async def test_a_write_whose_commit_completed_is_answered_as_a_success(server, stalled):
    host, plain = stalled
    title, response = await create(host.client, host.auth(plain))
    assert response.status_code == 201 and response.json()["data"]["title"] == title
    assert title in await stored_titles(server)


async def test_sigterm_ends_the_server_within_its_shutdown_limit_after_stalls(server):
    graceful = 3
    async with _demo_database(server) as plain:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = {
            "PB_TEST_SERVER_DATABASE": f"{server.url}?min_size=1&max_size={POOL}",
            "PB_TEST_DATABASE_TIMEOUT": str(LIMIT),
        }
        command = [
            *uvicorn_command("tests.support.stall_app:app", port),
            *("--timeout-graceful-shutdown", str(graceful), "--log-level", "info"),
        ]
        with tempfile.TemporaryDirectory() as folder:
            log = Path(folder) / "uvicorn.log"
            with running(command, env, log) as process:
                wait_until(process, log, lambda: answers(base + "/api/pb/v1/health"))
                headers = {"Authorization": f"Bearer {plain}"}
                async with httpx.AsyncClient(base_url=base, timeout=GUARD) as client:
                    await stall_rounds(server, client, headers, rounds=4)
                    listing = await client.get("/api/pb/v1/objects/articles", headers=headers)
                    assert listing.status_code == 200
                process.send_signal(signal.SIGTERM)
                # uvicorn's graceful limit, then the lifespan's close of the pool, which a leaked
                # connection would hold for over a minute; uvicorn ends by re-raising the signal
                assert await asyncio.to_thread(process.wait, graceful + 10) in (0, -signal.SIGTERM)
                assert "Application shutdown complete" in log.read_text(), log.read_text()[-3000:]
    assert await settled(server, None, 0) == []


class _demo_database:
    """The demo tables and a token on the private server, through a connection of the test's own."""

    def __init__(self, server: PrivatePostgres) -> None:
        self.database = Database(server.url)

    async def __aenter__(self) -> str:
        await self.database.connect()
        await install(self.database)
        await create_demo(self.database)
        _, plain = await TokenStore(self.database).create("stalls", "*")
        await self.database.disconnect()
        return plain

    async def __aexit__(self, *_: object) -> None:
        return None


async def test_a_statement_cut_off_by_the_time_limit_does_not_run_on_in_the_server(server):
    database = Database(server.url, min_size=1, max_size=2)
    await database.connect()

    async def slow_work() -> None:
        async with held_connection(database):
            await database.execute("SELECT pg_sleep(60) /* pb-cut-off */")

    try:
        with pytest.raises(ServiceUnavailable):
            await within(LIMIT, slow_work())
        running = (
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE query LIKE '%pb-cut-off%' AND pid <> pg_backend_pid()"
        )
        for _ in range(100):  # the cancel request is on its way; the server ends the statement
            if (await server.query(running))[0][0] == 0:
                break
            await asyncio.sleep(0.05)
        assert (await server.query(running))[0][0] == 0
    finally:
        await asyncio.wait_for(database.disconnect(), GUARD)
