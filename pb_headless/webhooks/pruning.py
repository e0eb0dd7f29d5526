"""Keeping the delivery log bounded: finished deliveries older than `keep_log` go, a batch at a time."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from databases import Database

from pb_headless.tables import webhook_tables

PRUNE_BATCH = 500  # bounded work per step: a large backlog goes over several minutes
_deliveries = webhook_tables.deliveries


async def prune_deliveries(database: Database, before: datetime, limit: int = PRUNE_BATCH) -> int:
    """Delete up to `limit` succeeded or failed deliveries made before `before` (naive UTC); pending
    ones are kept whatever their age. Returns how many went."""
    # Ids first, then a delete by id: MariaDB refuses LIMIT in an IN subquery, PostgreSQL on DELETE.
    query = (
        sa.select(_deliveries.c.id)
        .where(_deliveries.c.status != "pending", _deliveries.c.created_at < before)
        .order_by(_deliveries.c.id)
        .limit(limit)
    )
    ids = [row[0] for row in await database.fetch_all(query)]
    if ids:
        await database.execute(_deliveries.delete().where(_deliveries.c.id.in_(ids)))
    return len(ids)
