"""Pruning the change log: entries older than `service_changes_retention_days` go, a batch at a time.

Each batch first records the last position it removes (row 4 of `pb_state`), in the same transaction
as the delete, so a cursor from before it is answered 410 `cursor_expired` rather than silently
skipping what was removed. Entries are removed in position order only: the first one still young
enough stops the batch, so what stays is always every entry after the recorded position.
"""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from databases import Database

from pb_headless.changes.log import bounds
from pb_headless.changes.triggers import PRUNED_ID
from pb_headless.database.dialect import utcnow
from pb_headless.tables import DEFAULT_SETTINGS, changes, state

SETTING = "service_changes_retention_days"
BATCH = 1000
MAX_BATCHES = 20  # per run: a run is bounded work, the next run goes on


def retention_days(settings: dict[str, str] | None) -> int:
    value = (settings or {}).get(SETTING, DEFAULT_SETTINGS[SETTING]).strip()
    return int(value) if value.isdigit() and int(value) > 0 else int(DEFAULT_SETTINGS[SETTING])


async def prune(database: Database, days: int, *, batch: int = BATCH, batches: int = MAX_BATCHES) -> int:
    """Remove entries older than `days` days; how many were removed."""
    cutoff = utcnow() - timedelta(days=days)
    removed = 0
    for _ in range(batches):
        pruned = (await bounds(database)).pruned
        query = (
            sa.select(changes.c.position, changes.c.changed_at)
            .where(changes.c.position > pruned)
            .order_by(changes.c.position)
            .limit(batch)
        )
        rows = await database.fetch_all(query)
        old = [int(row[0]) for row in _prefix(rows, cutoff)]
        if not old:
            break
        async with database.transaction():
            last = old[-1]
            moved = sa.case((state.c.version < last, last), else_=state.c.version)
            await database.execute(state.update().where(state.c.id == PRUNED_ID).values(version=moved))
            await database.execute(changes.delete().where(changes.c.position <= last))
        removed += len(old)
        if len(old) < len(rows) or len(rows) < batch:
            break
    return removed


def _prefix(rows: list, cutoff: object) -> list:
    """The leading rows older than the cutoff."""
    taken = []
    for row in rows:
        at = row[1]
        if at is None or (at.replace(tzinfo=None) if hasattr(at, "replace") else at) >= cutoff:
            break
        taken.append(row)
    return taken
