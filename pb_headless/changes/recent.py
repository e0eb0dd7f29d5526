"""What the instance's one poll of the change log read lately, shared by the streams that are caught up.

Each poll reads the entries that committed since the previous one, for every table a stream follows,
in one statement (`StreamHub._poll`). A stream whose cursor is at or past where this memory begins
for its table takes its next entries from here instead of reading the log itself, and a record is
rendered once per tick for every stream that shows it the same way: 600 streams of one object cost
one read of the log and one read of each changed row, not 600 of each. A stream that is further
behind (a backlog, a cursor from an earlier visit) reads the log itself, paced (`stream.py`).
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from pb_headless.changes.feed import Reader, render_entry
from pb_headless.changes.log import Change

KEEP = 2000  # entries kept per table: older ones are read from the log by whoever still needs them
RENDERED = 5000  # rendered entries kept per tick, for every object and shape of record together


@dataclass(slots=True)
class TableLog:
    """Every entry of one table in `(known_from, head]` (the head being the poll's), in order."""

    known_from: int
    entries: list[Change] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)

    def extend(self, changes: list[Change]) -> None:
        self.entries.extend(changes)
        self.positions.extend(change.position for change in changes)
        if len(self.entries) > KEEP:
            cut = len(self.entries) - KEEP
            self.known_from = self.positions[cut - 1]
            del self.entries[:cut], self.positions[:cut]


class RecentChanges:
    def __init__(self) -> None:
        self.head: int | None = None  # the head the last poll read
        self._logs: dict[str, TableLog] = {}
        # (the reader's spec, its plan, the position) → the entry being rendered, for this tick only.
        self._rendered: dict[tuple[int, Any, int], tuple[Any, asyncio.Future[dict[str, Any]]]] = {}

    def advance(self, after: int, head: int, tables: Iterable[str], read: list[Change] | None) -> None:
        """The poll read `(after, head]` for `tables`: every entry (`read`), or None when there were
        more than it reads at once, so that the streams read the log themselves this time."""
        self._rendered.clear()  # rows may have changed since: a new tick renders them anew
        self.head = head
        for table in tables:
            log = self._logs.get(table)
            if log is None or read is None:
                self._logs[table] = TableLog(after if read is not None else head)
        for table, log in self._logs.items():
            if read is not None:
                log.extend([change for change in read if change.table == table])

    def forget(self, table: str) -> None:
        """No stream follows `table` any more."""
        self._logs.pop(table, None)

    def latest_after(
        self, table: str, cursor: int, limit: int, name: str | None = None
    ) -> tuple[list[Change], int, bool] | None:
        """What the feed would read after `cursor` (each row's latest entry, in the order of those
        entries, at most `limit`; with `name`, of the changes that object saw), where to resume and
        whether more follow; None when this memory does not reach back to `cursor`: the stream reads
        the log itself."""
        log = self._logs.get(table)
        if log is None or self.head is None or cursor < log.known_from:
            return None
        latest: dict[str, Change] = {}
        for change in log.entries[bisect.bisect_right(log.positions, cursor) :]:
            if name is not None and not change.is_seen_by(name):
                continue
            earlier = latest.pop(change.key, None)  # a row changed again moves to its latest change
            latest[change.key] = change if earlier is None else replace(change, entries=earlier.entries + 1)
        found = list(latest.values())
        if len(found) > limit:
            return found[:limit], found[limit - 1].position, True
        return found, max(cursor, self.head), False

    async def render(self, reader: Reader, change: Change) -> dict[str, Any]:
        """The entry as `render_entry` gives it, made once per tick for the streams that show the same
        object the same way (the same spec and plan)."""
        key = (id(reader.spec), reader.plan, change.position)
        kept = self._rendered.get(key)
        if kept is None:
            if len(self._rendered) >= RENDERED:
                return await render_entry(reader, change)
            # The spec is kept with it, so that its id is not reused while the key stands.
            kept = (reader.spec, asyncio.ensure_future(render_entry(reader, change)))
            self._rendered[key] = kept
        return dict(await asyncio.shield(kept[1]))
