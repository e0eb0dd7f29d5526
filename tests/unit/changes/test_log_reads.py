"""The change log's one reader (changes/log.py `ChangeLog.entries_after`): entries up to the head it
read first, in position order, and never one above it — what the feed, the stream and the webhooks'
fan-out all read by."""

from __future__ import annotations

from pb_headless.changes import ChangeLog
from pb_headless.database.change_triggers import HEAD_ID
from pb_headless.database.dialect import utcnow
from pb_headless.tables import changes, state


async def add(database, position: int) -> None:
    values = {"position": position, "table_name": "t", "row_key": str(position), "op": "update"}
    await database.execute(changes.insert().values(**values, changed_at=utcnow()))


async def move_head(database, head: int) -> None:
    await database.execute(state.update().where(state.c.id == HEAD_ID).values(version=head))


async def test_entries_come_after_the_position_in_order_and_up_to_the_limit(sqlite_database):
    log = ChangeLog.of(sqlite_database)
    for position in (1, 2, 3, 4):
        await add(sqlite_database, position)
    await move_head(sqlite_database, 4)
    entries, head = await log.entries_after(1, 2)
    assert [entry.position for entry in entries] == [2, 3] and head == 4


async def test_an_entry_above_the_head_is_not_read_until_the_head_reaches_it(sqlite_database):
    """Above the head is a position whose writer has not committed as far as the reader can tell:
    the reader stops at the head, however old the entry, and takes it once the head moved."""
    log = ChangeLog.of(sqlite_database)
    await add(sqlite_database, 1)
    await add(sqlite_database, 2)
    await move_head(sqlite_database, 1)
    entries, head = await log.entries_after(0, 10)
    assert [entry.position for entry in entries] == [1] and head == 1
    await move_head(sqlite_database, 2)
    entries, head = await log.entries_after(head, 10)
    assert [entry.position for entry in entries] == [2] and head == 2
