"""Reading the change log: in position order, stopping before a gap that may still be committing."""

from __future__ import annotations

from datetime import timedelta

from pb_headless.database.dialect import utcnow
from pb_headless.tables import changes
from pb_headless.webhooks.source import GAP_WAIT, changes_after


async def add(database, position: int, age: timedelta = timedelta(0)) -> None:
    values = {"position": position, "table_name": "t", "row_key": str(position), "op": "update"}
    await database.execute(changes.insert().values(**values, changed_at=utcnow() - age))


async def test_entries_come_after_the_position_in_order_and_up_to_the_limit(sqlite_database):
    for position in (1, 2, 3, 4):
        await add(sqlite_database, position)
    assert [entry.position for entry in await changes_after(sqlite_database, 1, 2)] == [2, 3]


async def test_reading_stops_before_a_recent_gap_and_passes_an_old_one(sqlite_database):
    await add(sqlite_database, 1)
    await add(sqlite_database, 3)  # 2 may belong to a transaction that has not committed yet
    assert [entry.position for entry in await changes_after(sqlite_database, 1, 10)] == []
    await add(sqlite_database, 6, age=GAP_WAIT * 2)
    await sqlite_database.execute(changes.delete().where(changes.c.position == 3))
    assert [entry.position for entry in await changes_after(sqlite_database, 1, 10)] == [6]
