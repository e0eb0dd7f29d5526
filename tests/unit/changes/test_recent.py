"""pb_headless/changes/recent.py: what the instance's poll read, handed to the streams that are caught
up, must be exactly what the feed would read for them from the log (each row's latest entry after the
cursor, in the order of those entries), or nothing when it does not reach back to the cursor."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

from pb_headless.changes import recent
from pb_headless.changes.log import Change
from pb_headless.changes.recent import RecentChanges

AT = datetime(2026, 11, 28, tzinfo=UTC)


def change(position: int, key: str, table: str = "articles") -> Change:
    return Change(position, table, key, "update", AT)


def feed_would_read(log: list[Change], table: str, cursor: int, head: int) -> list[Change]:
    """The log's reading (latest_per_row) written plainly: each row's latest entry, with how many
    entries the row has after the cursor."""
    latest: dict[str, Change] = {}
    for entry in log:
        if entry.table == table and cursor < entry.position <= head:
            earlier = latest.get(entry.key)
            latest[entry.key] = replace(entry, entries=1 if earlier is None else earlier.entries + 1)
    return sorted(latest.values(), key=lambda entry: entry.position)


def test_a_row_changed_twice_comes_once_where_its_latest_change_is():
    memory = RecentChanges()
    memory.advance(10, 10, ["articles"], [])
    memory.advance(
        10, 14, ["articles"], [change(11, "a"), change(12, "b"), change(13, "a"), change(14, "c", "other")]
    )
    twice = replace(change(13, "a"), entries=2)  # the row's two entries after the cursor
    assert memory.latest_after("articles", 10, 100) == ([change(12, "b"), twice], 14, False)
    assert memory.latest_after("articles", 12, 100) == ([change(13, "a")], 14, False)
    assert memory.latest_after("articles", 14, 100) == ([], 14, False)


def test_a_cursor_from_before_what_the_poll_read_is_left_to_the_log():
    memory = RecentChanges()
    memory.advance(10, 10, ["articles"], [])
    assert memory.latest_after("articles", 9, 100) is None
    assert memory.latest_after("comments", 10, 100) is None  # a table no stream follows


def test_more_rows_than_the_limit_come_a_page_at_a_time():
    memory = RecentChanges()
    memory.advance(0, 0, ["articles"], [])
    memory.advance(0, 3, ["articles"], [change(1, "a"), change(2, "b"), change(3, "c")])
    assert memory.latest_after("articles", 0, 2) == ([change(1, "a"), change(2, "b")], 2, True)
    assert memory.latest_after("articles", 2, 2) == ([change(3, "c")], 3, False)


def test_a_burst_the_poll_did_not_read_sends_every_stream_to_the_log():
    memory = RecentChanges()
    memory.advance(0, 0, ["articles"], [])
    memory.advance(0, 5000, ["articles"], None)
    assert memory.latest_after("articles", 0, 100) is None
    assert memory.latest_after("articles", 5000, 100) == ([], 5000, False)


def test_what_is_handed_out_is_what_the_log_would_give_through_many_polls(monkeypatch):
    monkeypatch.setattr(recent, "KEEP", 50)  # older entries are forgotten along the way
    chooser = random.Random(34)
    memory, log, head = RecentChanges(), [], 0
    memory.advance(0, 0, ["articles", "comments"], [])
    for _ in range(200):
        read = []
        for _ in range(chooser.randrange(0, 6)):
            head += 1
            read.append(change(head, f"k{chooser.randrange(12)}", chooser.choice(["articles", "comments"])))
        log += read
        memory.advance(head - len(read), head, ["articles", "comments"], read)
        cursor = chooser.randrange(0, head + 1)
        given = memory.latest_after("articles", cursor, 1000)
        if given is not None:
            assert given == (feed_would_read(log, "articles", cursor, head), head, False)
        elif head > 50:
            assert cursor <= head - 50  # only a cursor older than what is kept goes to the log
