"""The change log and what reads it: triggers that record every committed change of a published table,
the feed `GET /changes/{name}`, the live stream, and one reader for other parts (docs/changes.md).

`changes_after(database, position, limit, tables=None)` (in `log.py`) is that reader: only committed
entries, in commit order, and the head to resume from.
"""

from __future__ import annotations

from pb_headless.changes.cursor import decode_cursor, encode_cursor
from pb_headless.changes.hub import ChangeHub
from pb_headless.changes.log import Change, bounds, changes_after
from pb_headless.changes.retention import prune
from pb_headless.changes.visibility import WatchedTable, watched_tables
from pb_headless.state.snapshot import Snapshot

__all__ = [
    "Change",
    "ChangeHub",
    "bounds",
    "changes_after",
    "decode_cursor",
    "encode_cursor",
    "follow_catalog",
    "prune",
]


async def follow_catalog(hub: ChangeHub, snapshot: Snapshot) -> None:
    """Triggers on exactly the tables the snapshot's catalog publishes (several objects may publish
    one table), installed or removed once per version."""
    tables = snapshot.derive("changes.tables", _published_tables)  # once per version, not per request
    await hub.follow(snapshot.version, tables, snapshot.settings)


def _published_tables(snapshot: Snapshot) -> dict[str, WatchedTable]:
    """Published table → its key column and the rows each object publishing it serves."""
    return watched_tables(snapshot.catalog)
