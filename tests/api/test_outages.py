"""A frozen or vanished database, an exhausted pool and stalled clients never hang the API
(docs/hardening.md): every endpoint answers 503 `service_unavailable` with Retry-After within the
database time limit, /health says "unavailable", a body that does not arrive is a 408, and the next
request after the database returns succeeds without a restart.

The server databases sit behind a loopback relay (tests/support/relay.py) that the test freezes or
takes down, so the servers other tests share are never touched.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa
from databases import Database, DatabaseURL

from tests.support.databases import open_database
from tests.support.demo import articles, create_demo, demo_registry
from tests.support.host import Host, build_host
from tests.support.relay import Relay

LIMIT = 1.0  # the database time limit these hosts run with, in seconds
GUARD = 15.0  # a request still open after this is hanging: the test fails instead of waiting forever
ENDPOINTS = (
    "/api/pb/v1/me",
    "/api/pb/v1/objects",
    "/api/pb/v1/objects/articles",
    "/api/pb/v1/objects/articles/1",
)


@pytest.fixture(params=["postgresql", "mariadb"])
async def relayed(request, tmp_path_factory) -> AsyncIterator[tuple[Host, Relay, str]]:
    """The demo site served through a relay to the real server, with a small pool."""
    async with open_database(request.param, tmp_path_factory.mktemp("db")) as direct:
        await create_demo(direct)
        url = DatabaseURL(str(direct.url))
        relay = Relay(url.hostname, url.port)
        await relay.start()
        database = Database(str(url.replace(port=relay.port)), min_size=1, max_size=3)
        await database.connect()
        host = await build_host(database, demo_registry(), database_timeout=LIMIT, body_timeout=2.0)
        plain = await host.token("*")
        try:
            yield host, relay, plain
        finally:
            await relay.restore()
            await host.client.aclose()
            await asyncio.wait_for(database.disconnect(), GUARD)
            await relay.close()


async def get(host: Host, path: str, plain: str):
    return await asyncio.wait_for(host.client.get(path, headers=host.auth(plain)), GUARD)


def assert_unavailable(response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["error"] == "service_unavailable"
    assert int(response.headers["retry-after"]) >= 1
    assert "x-ratelimit-limit" in response.headers


async def test_a_database_that_goes_away_gets_503_everywhere_then_the_next_request_succeeds(relayed):
    host, relay, plain = relayed
    assert (await get(host, "/api/pb/v1/objects/articles", plain)).status_code == 200
    await relay.take_down()
    for path in ENDPOINTS:
        assert_unavailable(await get(host, path, plain))
    created = await asyncio.wait_for(
        host.client.post("/api/pb/v1/objects/articles", json={"title": "x"}, headers=host.auth(plain)), GUARD
    )
    assert_unavailable(created)
    health = await get(host, "/api/pb/v1/health", plain)
    assert health.status_code == 503 and health.json()["status"] == "unavailable"
    await relay.restore()
    assert (await get(host, "/api/pb/v1/objects/articles", plain)).status_code == 200


async def test_a_frozen_database_gets_503_within_the_limit_then_recovers_without_a_restart(relayed):
    host, relay, plain = relayed
    assert (await get(host, "/api/pb/v1/me", plain)).status_code == 200
    relay.freeze()
    for path in ENDPOINTS:
        assert_unavailable(await get(host, path, plain))
    health = await get(host, "/api/pb/v1/health", plain)
    assert health.status_code == 503 and health.json()["database"] == "unavailable"
    await relay.restore()
    response = await get(host, "/api/pb/v1/objects/articles?limit=2", plain)
    assert response.status_code == 200 and response.json()["meta"]["count"] == 2


async def test_an_exhausted_pool_gets_503_instead_of_a_wait_without_end(relayed):
    host, relay, plain = relayed
    await get(host, "/api/pb/v1/me", plain)
    relay.freeze()  # every connection of the pool gets stuck in a query that never returns
    stuck = [asyncio.ensure_future(get(host, "/api/pb/v1/objects/articles", plain)) for _ in range(5)]
    for response in await asyncio.gather(*stuck):
        assert_unavailable(response)
    await relay.restore()
    assert (await get(host, "/api/pb/v1/objects", plain)).status_code == 200


async def test_stalled_bodies_hold_no_connection_and_end_in_408(relayed):
    host, _, plain = relayed
    release = asyncio.Event()

    async def four_bytes_then_silence():
        yield b'{"ti'
        await release.wait()

    headers = {**host.auth(plain), "Content-Type": "application/json", "Content-Length": "100"}
    stalled = [
        asyncio.ensure_future(
            host.client.post(
                "/api/pb/v1/objects/articles", headers=headers, content=four_bytes_then_silence()
            )
        )
        for _ in range(10)
    ]
    await asyncio.sleep(0.2)
    # Ten stalled clients and a pool of three: a read still gets a connection at once.
    response = await get(host, "/api/pb/v1/objects/articles?limit=1", plain)
    assert response.status_code == 200
    assert not any(request.done() for request in stalled)
    answers = await asyncio.wait_for(asyncio.gather(*stalled), GUARD)
    release.set()
    assert {answer.status_code for answer in answers} == {408}
    assert answers[0].json()["error"] == "request_timeout"


async def test_a_sqlite_write_behind_a_lock_held_elsewhere_gets_503_then_succeeds(tmp_path_factory):
    async with open_database("sqlite", tmp_path_factory.mktemp("db")) as database:
        await create_demo(database)
        host = await build_host(database, demo_registry(), database_timeout=LIMIT)
        plain = await host.token("*")
        holder = sqlite3.connect(database.url.database, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")  # another process's writer, taking its time
            blocked = await asyncio.wait_for(
                host.client.post(
                    "/api/pb/v1/objects/articles", json={"title": "queued"}, headers=host.auth(plain)
                ),
                GUARD,
            )
            assert_unavailable(blocked)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        created = await asyncio.wait_for(
            host.client.post(
                "/api/pb/v1/objects/articles", json={"title": "after"}, headers=host.auth(plain)
            ),
            GUARD,
        )
        assert created.status_code == 201, created.text
        titles = [row[0] for row in await database.fetch_all(sa.select(articles.c.title))]
        assert "after" in titles and "queued" not in titles
        await host.client.aclose()
