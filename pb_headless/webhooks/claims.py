"""Claiming due deliveries, so that with several instances each try is made by one of them.

A claim is a short transaction: the due rows are locked (`FOR UPDATE SKIP LOCKED` on PostgreSQL and
MariaDB, so instances pass each other's rows by; SQLite has one writer) and leased, by moving their
next try past the time a try can take. The try itself runs outside any transaction. A delivery waits
while an older one of the same record to the same endpoint is still pending, so a receiver that was
down gets each record's events in order. An endpoint that already has its share of tries under way
on this instance is passed over, so that one slow receiver never holds up the others' deliveries.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

import sqlalchemy as sa
from databases import Database

from pb_headless.database.backends import backend_for
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.locking import lock_for_writing
from pb_headless.webhooks.records import DeliveryInfo, delivery_from_row

_deliveries = webhook_tables.deliveries
_webhooks = webhook_tables.webhooks
_earlier = _deliveries.alias("earlier")


LOOK_AHEAD = 4  # due rows read per place to fill, so that one endpoint's backlog does not hide another's


def _due(now: datetime, limit: int, passed_over: list[int]) -> sa.Select:
    older_pending = sa.exists().where(
        _earlier.c.webhook_id == _deliveries.c.webhook_id,
        _earlier.c.object_name == _deliveries.c.object_name,
        _earlier.c.row_key == _deliveries.c.row_key,
        _earlier.c.status == "pending",
        _earlier.c.id < _deliveries.c.id,
    )
    enabled = sa.select(_webhooks.c.id).where(_webhooks.c.enabled.is_(True))
    if passed_over:
        enabled = enabled.where(_webhooks.c.id.not_in(passed_over))
    return (
        _deliveries.select()
        .where(
            _deliveries.c.status == "pending",
            _deliveries.c.next_try_at <= now,
            _deliveries.c.webhook_id.in_(enabled),
            ~older_pending,
        )
        .order_by(_deliveries.c.id)
        .limit(limit)
    )


async def claim(
    database: Database,
    now: datetime,
    lease: float,
    limit: int,
    *,
    per_endpoint: int | None = None,
    busy: Mapping[int, int] | None = None,
) -> list[DeliveryInfo]:
    """Lease up to `limit` due deliveries to this instance, at most `per_endpoint` for one endpoint
    counting the `busy` tries (endpoint id → tries under way) it has already; `now` is naive UTC."""
    taken = dict(busy or {})
    cap = per_endpoint or limit
    full = sorted(endpoint for endpoint, count in taken.items() if count >= cap)
    if await database.fetch_one(_due(now, 1, full)) is None:
        return []  # nothing due: no lock taken (on SQLite it would hold up every other writer)
    query = _due(now, limit * LOOK_AHEAD, full)
    query = backend_for(database).lock_due_rows(query, _deliveries)
    async with database.transaction():
        await lock_for_writing(database)  # SQLite: two processes never lease the same rows
        due = [delivery_from_row(row._mapping) for row in await database.fetch_all(query)]
        claimed = _shares(due, taken, cap, limit)
        if claimed:
            leased = (
                _deliveries.update()
                .where(_deliveries.c.id.in_([delivery.id for delivery in claimed]))
                .values(next_try_at=now + timedelta(seconds=lease))
            )
            await database.execute(leased)
    return claimed


def _shares(due: list[DeliveryInfo], taken: dict[int, int], cap: int, limit: int) -> list[DeliveryInfo]:
    """The oldest due deliveries, at most `cap` under way per endpoint and `limit` in all."""
    chosen: list[DeliveryInfo] = []
    for delivery in due:
        if len(chosen) == limit:
            break
        if taken.get(delivery.webhook_id, 0) < cap:
            taken[delivery.webhook_id] = taken.get(delivery.webhook_id, 0) + 1
            chosen.append(delivery)
    return chosen
