"""Where deliveries come from: the change log, read in position order after a position.

This is the one function the webhooks read the log through, so the change feed's own reader (which
also knows about commit order) can take its place without touching anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from databases import Database

from pb_headless.changes.visibility import is_seen_by
from pb_headless.database.dialect import utcnow
from pb_headless.tables import changes

# A position missing between two entries may belong to a transaction still committing (PostgreSQL
# and MariaDB hand positions out before commit); reading stops before such a gap until it is this old,
# after which it is a rolled-back write and is passed.
GAP_WAIT = timedelta(seconds=5)


@dataclass(frozen=True, slots=True)
class Change:
    position: int
    table_name: str
    row_key: str
    op: str  # create | update | delete
    changed_at: datetime
    seen_before: str | None = None  # the objects that served the row before, `|name|` each (None: not known)
    seen_after: str | None = None
    unchanged: str | None = None  # the watched columns an update left alone, `,name,` each (None: not known)

    def is_seen_by(self, object_name: str) -> bool:
        """Whether the object served the row before or after the change: when it served it neither
        (a draft created and edited unpublished), no endpoint hears of it, so its key is never sent."""
        return is_seen_by(self.seen_before, object_name) or is_seen_by(self.seen_after, object_name)


async def changes_after(database: Database, position: int, limit: int) -> list[Change]:
    """Up to `limit` entries after `position`, oldest first, stopping before a recent gap."""
    query = changes.select().where(changes.c.position > position).order_by(changes.c.position).limit(limit)
    found: list[Change] = []
    expected = position + 1
    for row in await database.fetch_all(query):
        entry = row._mapping
        change = Change(
            int(entry["position"]),
            entry["table_name"],
            entry["row_key"],
            entry["op"],
            entry["changed_at"],
            entry["seen_before"],
            entry["seen_after"],
            entry["unchanged"],
        )
        if change.position != expected and change.changed_at > utcnow() - GAP_WAIT and position > 0:
            break
        found.append(change)
        expected = change.position + 1
    return found


async def latest_position(database: Database) -> int:
    return int(await database.fetch_val(sa.select(sa.func.coalesce(sa.func.max(changes.c.position), 0))))
