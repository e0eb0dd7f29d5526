"""SQLite reads that run on aiosqlite's threads take turns: at most `THREAD_READS` of one database at a
time per process (pb_headless/database/sqlite/turns.py, docs/performance.md "Tails"), first come,
first served, with the same answers; a read inside its task's own transaction takes no turn."""

from __future__ import annotations

import asyncio

from pb_headless.database import internals
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.sqlite import turns as sqlite_turns
from pb_headless.database.sqlite.accelerator import SQLiteAccelerator
from pb_headless.database.statements import run
from tests.support.constructor import SEARCHABLE_NOTES, SEARCHABLE_NOTES_TAB, constructor_host

NOTES, TAB = SEARCHABLE_NOTES, SEARCHABLE_NOTES_TAB
URL = "/api/pb/v1/objects/notes"


async def site_of(sqlite_database, host_factory):
    rows = [{"title": f"note {n}" + (" needle" if n % 100 == 0 else ""), "rank": n} for n in range(1, 1001)]
    return await constructor_host(sqlite_database, host_factory, NOTES, TAB, rows)


def turns_of(database) -> sqlite_turns.ThreadTurns:
    accelerator = accelerator_of(database)
    assert isinstance(accelerator, SQLiteAccelerator)
    return accelerator.turns


async def test_searches_at_once_run_on_threads_a_few_at_a_time_with_the_same_answers(
    sqlite_database, host_factory, monkeypatch
):
    site = await site_of(sqlite_database, host_factory)
    address = f"{URL}?search=needle&limit=5"
    # Asked alone with another token: the eight below, arriving together, then find no answer kept
    # for theirs (docs/caching.md, "Answers kept by their tag") and each reads its page.
    alone = await site.client.get(address, headers=site.auth(await site.token("*")))
    assert alone.status_code == 200, alone.text
    running = peak = 0
    driver = internals.driver

    class Counted:
        """The driver's connection, counting the statements under way on threads."""

        def __init__(self, raw):
            self.raw = raw

        async def execute_fetchall(self, sql, arguments):
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            try:
                await asyncio.sleep(0.01)  # long enough for every other request to come
                return await self.raw.execute_fetchall(sql, arguments)
            finally:
                running -= 1

    monkeypatch.setattr(internals, "driver", lambda connection: Counted(driver(connection)))
    # One token may run only two searches at once (docs/hardening.md); this test is about the turns of
    # eight reads, so it lets the token have eight.
    monkeypatch.setattr(site.api.caches.searches, "per_token", 8)
    answers = await asyncio.gather(*(site.client.get(address, headers=site.headers) for _ in range(8)))
    assert [answer.status_code for answer in answers] == [200] * 8
    assert all(answer.json() == alone.json() for answer in answers)
    assert peak == sqlite_turns.THREAD_READS  # never all eight at once


async def test_a_read_inside_its_own_transaction_takes_no_turn(sqlite_database, host_factory):
    site = await site_of(sqlite_database, host_factory)
    database = site.database
    turns = turns_of(database)
    held = turns.turn()
    for _ in range(turns.width):  # every turn taken, as by long reads of other requests
        await held.acquire()
    try:
        waiting = asyncio.ensure_future(run(database, "qmark", "SELECT count(*) FROM notes", ()))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not waiting.done()  # outside a transaction: it waits for its turn

        async def in_transaction():
            async with database.transaction():
                return await run(database, "qmark", "SELECT count(*) FROM notes", ())

        assert [tuple(row) for row in await asyncio.wait_for(in_transaction(), 30)] == [(1000,)]
    finally:
        for _ in range(turns.width):
            held.release()
    assert [tuple(row) for row in await asyncio.wait_for(waiting, 30)] == [(1000,)]


def test_each_event_loop_gets_turns_of_its_own():
    turns = sqlite_turns.ThreadTurns(width=3)

    async def taken() -> asyncio.Semaphore:
        first = turns.turn()
        assert first is turns.turn()  # the same turns for the same loop
        return first

    one, other = asyncio.run(taken()), asyncio.run(taken())
    assert one is not other
    assert other._value == 3
