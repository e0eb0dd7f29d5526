"""A batch under the database time limit is one unit (docs/writes.md, "Atomic batches"): cut before
its COMMIT it answers 503 with nothing stored; cut while its COMMIT is under way it answers that the
outcome is unknown, and a retry with the same Idempotency-Key then stores it exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from databases import Database

from pb_headless import install
from pb_headless.database.deadline import OUTCOME_UNKNOWN, TOO_SLOW, UNAVAILABLE
from tests.api.batch_site import BATCH, batch_registry, count, create_batch_site, labels, op, snapshot
from tests.api.test_stalls import hanging_commits
from tests.support.demo import articles
from tests.support.host import build_host
from tests.support.private_postgres import PrivatePostgres, private_postgres

pytestmark = pytest.mark.slow

LIMIT = 0.6  # seconds: the database time limit of these hosts
GUARD = 20.0


def body(tag: str) -> dict:
    return {
        "operations": [
            op("create", "labels", data={"name": f"{tag} one"}),
            op("create", "articles", data={"title": f"{tag} article"}),
            op("update", "articles", id=1, data={"title": f"{tag} title"}),
        ]
    }


async def test_a_batch_waiting_past_the_time_limit_is_a_503_and_stores_nothing(database, host_factory):
    await create_batch_site(database)
    host = await host_factory(database, batch_registry(), database_timeout=LIMIT)
    headers = host.auth(await host.token("*"))
    assert (await host.client.get("/api/pb/v1/me", headers=headers)).status_code == 200  # compiled
    before = await snapshot(database)
    async with database.connection() as other:
        holding = await other.transaction()
        try:
            # Another writer holds what the batch needs past the limit: a row lock (SQLite: its write lock).
            if database.url.dialect == "sqlite":
                await other.execute(labels.insert().values(name="holding the lock", published=True))
            else:
                await other.fetch_all(articles.select().where(articles.c.id == 1).with_for_update())
            answer = await asyncio.wait_for(host.client.post(BATCH, json=body("cut"), headers=headers), GUARD)
        finally:
            await holding.rollback()
    assert answer.status_code == 503 and answer.json()["message"] in (TOO_SLOW, UNAVAILABLE)
    assert "retry-after" in answer.headers
    assert await snapshot(database) == before


@pytest.fixture
async def server() -> AsyncIterator[PrivatePostgres]:
    with private_postgres() as postgres:
        try:
            yield postgres
        finally:
            postgres.thaw()


async def test_a_batch_cut_during_its_commit_says_the_outcome_is_unknown_and_is_all_or_nothing(server):
    database = Database(server.url, min_size=1, max_size=4)
    await database.connect()
    try:
        await install(database)
        await create_batch_site(database)
        host = await build_host(database, batch_registry(), database_timeout=LIMIT)
        headers = host.auth(await host.token("*"))
        assert (await host.client.get("/api/pb/v1/me", headers=headers)).status_code == 200

        await hanging_commits(server, True)  # COMMIT waits for a standby that never answers
        cut = await asyncio.wait_for(host.client.post(BATCH, json=body("hung"), headers=headers), GUARD)
        await hanging_commits(server, False)
        assert cut.status_code == 503 and cut.json()["message"] == OUTCOME_UNKNOWN
        assert "retry with the same Idempotency-Key is safe" in cut.json()["message"]
        stored = [
            await count(database, labels, labels.c.name == "hung one"),
            await count(database, articles, articles.c.title == "hung article"),
            await count(database, articles, articles.c.title == "hung title"),
        ]
        assert stored in ([0, 0, 0], [1, 1, 1])
        await host.client.aclose()
    finally:
        server.thaw()
        await asyncio.wait_for(database.disconnect(), GUARD)
