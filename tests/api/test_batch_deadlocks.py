"""Batches that meet other writers on the same rows (docs/writes.md, "Bounds, retries and the time
limit"): none is left hanging, a deadlock's victim runs once more before its answer is sent (a second
deadlock is a 503 that stored nothing), and the database holds exactly the writes that were
acknowledged."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa
from databases import Database

from tests.api.batch_site import BATCH, op, serve_batch_site
from tests.support.demo import articles, authors

GUARD = 60.0  # a batch still running after this is hanging: the test fails instead


@pytest.fixture
async def site(database, host_factory):
    host = await serve_batch_site(database, host_factory)
    assert (await host.client.get("/api/pb/v1/me", headers=host.headers)).status_code == 200  # compiled
    return host


@pytest.fixture
async def other_writer(database) -> AsyncIterator[Database]:
    """A connection of another program writing to the same database."""
    other = Database(str(database.url))
    await other.connect()
    yield other
    await other.disconnect()


def send(host, body):
    return asyncio.create_task(
        asyncio.wait_for(host.client.post(BATCH, json=body, headers=host.headers), GUARD)
    )


async def rows(database, table: sa.Table, *columns: str) -> dict[int, tuple]:
    selected = sa.select(table.c.id, *(table.c[name] for name in columns)).order_by(table.c.id)
    return {
        row[0]: tuple(row[i] for i in range(1, len(columns) + 1))
        for row in await database.fetch_all(selected)
    }


async def waiting_for_a_lock(database) -> None:
    """Until another connection to this test's database waits for a row lock."""
    if database.url.dialect == "postgresql":
        query = (
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
    else:  # MariaDB's innodb_trx may lag: the statement that waits is there in the process list.
        # Only one in it for 100 ms: on a busy machine the batch's row lock can be caught while it is
        # still being taken, and a writer sent then meets the batch before it waits (another victim).
        query = (
            "SELECT count(*) FROM information_schema.processlist WHERE db = DATABASE() "
            "AND id <> CONNECTION_ID() AND info LIKE '%FOR UPDATE' AND time_ms > 100"
        )
    for _ in range(500):
        if await database.fetch_val(query):
            await asyncio.sleep(0.1)  # its first row is locked, its second awaited
            return
        await asyncio.sleep(0.01)
    raise AssertionError("nothing waits for a lock")


async def test_concurrent_batches_updating_two_rows_in_opposite_orders_leave_exactly_the_acknowledged_writes(
    site,
):
    async def batch(number: int):
        first, second = (1, 2) if number % 2 else (2, 1)
        body = {
            "operations": [
                op("update", "articles", id=first, data={"views": number}),
                op("create", "articles", data={"title": f"concurrent {number}", "author_id": 1}),
                op("update", "articles", id=second, data={"views": number}),
                op("update", "authors", id=1, data={"name": f"Anna {number}"}),
            ]
        }
        return await send(site, body)

    answers = await asyncio.gather(*(batch(number) for number in range(8)))

    for answer in answers:  # each ended; a 503 is the deadlock answer docs/writes.md names
        assert answer.status_code in (200, 503), answer.text
        if answer.status_code == 503:
            assert answer.json()["error"] == "service_unavailable" and "nothing was stored" in answer.text
    done = {number for number, answer in enumerate(answers) if answer.status_code == 200}
    assert done, [answer.text for answer in answers]
    views = await rows(site.database, articles, "views")
    last = views[1][0]
    assert views[2] == (last,) and last in done  # one batch's outcome, whole, for both rows
    assert (await rows(site.database, authors, "name"))[1] == (f"Anna {last}",)
    titles = await site.database.fetch_all(
        sa.select(articles.c.title).where(articles.c.title.like("concurrent %"))
    )
    assert sorted(row[0] for row in titles) == sorted(f"concurrent {number}" for number in done)


@pytest.mark.parametrize("database", ["postgresql", "mariadb"], indirect=True)
async def test_a_batch_chosen_as_a_deadlocks_victim_runs_again_and_is_written_once(site, other_writer):
    body = {
        "operations": [
            op("create", "articles", data={"title": "written after the deadlock"}),
            op("update", "articles", id=1, data={"views": 11}),
            op("update", "articles", id=2, data={"views": 22}),
        ]
    }
    async with other_writer.transaction():
        # MariaDB rolls back the transaction that changed fewer rows: the other writer changes more.
        await other_writer.execute(articles.update().where(articles.c.id.in_([3, 4, 5])).values(views=0))
        await other_writer.execute(articles.update().where(articles.c.id == 2).values(title="Other 2"))
        batch = send(site, body)
        await waiting_for_a_lock(other_writer)  # the batch holds row 1 and waits for row 2
        await other_writer.execute(articles.update().where(articles.c.id == 1).values(title="Other 1"))
    answer = await batch

    assert answer.status_code == 200, answer.text
    assert [result["status"] for result in answer.json()["data"]] == [201, 200, 200]
    stored = await rows(site.database, articles, "title", "views")
    # The other writer's changes, then the batch's, run again once the other writer had committed.
    assert (stored[1], stored[2], stored[3]) == (("Other 1", 11), ("Other 2", 22), (stored[3][0], 0))
    created = [key for key, (title, _) in stored.items() if title == "written after the deadlock"]
    assert created == [answer.json()["data"][0]["data"]["id"]]


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_batch_waits_while_another_sqlite_writer_holds_the_database_then_is_written(
    site, other_writer
):
    body = {"operations": [op("update", "articles", id=1, data={"views": 11})]}
    async with other_writer.transaction():
        await other_writer.execute(articles.update().where(articles.c.id == 1).values(title="Other 1"))
        batch = send(site, body)
        await asyncio.sleep(0.3)  # the batch waits for SQLite's write lock meanwhile
        assert not batch.done()
    answer = await batch
    assert answer.status_code == 200, answer.text
    assert (await rows(site.database, articles, "title", "views"))[1] == ("Other 1", 11)


def locked(table: sa.Table, *keys: int) -> sa.Select:
    return sa.select(table.c.id).where(table.c.id.in_(keys)).with_for_update()


@pytest.mark.parametrize("database", ["postgresql", "mariadb"], indirect=True)
async def test_a_batch_deadlocked_again_when_run_once_more_is_a_503_that_stored_nothing(site, database):
    """Two other writers: the first deadlocks the batch, the second deadlocks its second run. Each
    holds more than the batch, so MariaDB too rolls back the batch (it chooses the lighter one)."""
    body = {
        "operations": [
            op("create", "articles", data={"title": "never written"}),
            *(op("update", "articles", id=key, data={"views": 10 + key}) for key in (1, 2, 3)),
        ]
    }
    first, second = Database(str(database.url)), Database(str(database.url))
    await first.connect()
    await second.connect()
    try:
        async with second.transaction():
            # Row locks only: a write would wait for the first writer's (the change log takes turns).
            await second.fetch_all(locked(articles, 3))  # not 6: MariaDB's range on 4, 5 locks it
            await second.fetch_all(locked(authors, 1, 2, 3))
            async with first.transaction():
                await first.execute(articles.update().where(articles.c.id.in_([4, 5])).values(views=0))
                await first.execute(articles.update().where(articles.c.id == 2).values(title="First 2"))
                batch = send(site, body)
                await waiting_for_a_lock(first)  # the batch holds row 1, waits for row 2
                await first.execute(articles.update().where(articles.c.id == 1).values(title="First 1"))
            await asyncio.sleep(0.3)  # the batch, run again, takes rows 1 and 2
            await waiting_for_a_lock(first)  # and waits for row 3
            await second.execute(articles.update().where(articles.c.id == 1).values(title="Second 1"))
    finally:
        await first.disconnect()
        await second.disconnect()
    answer = await batch

    assert answer.status_code == 503, answer.text
    assert (
        answer.json()["error"] == "service_unavailable" and "nothing was stored" in answer.json()["message"]
    )
    assert "retry-after" in answer.headers
    stored = await rows(site.database, articles, "title", "views")
    assert (stored[1][0], stored[2][0]) == ("Second 1", "First 2")
    assert all(stored[key][1] != 10 + key for key in (1, 2, 3))  # no view count of the batch
    assert "never written" not in [title for title, _ in stored.values()]
