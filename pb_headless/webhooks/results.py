"""What a try's answer does: to its delivery (done, retried later, or failed) and to its endpoint (a
failure streak; an endpoint failing for `disable_after` is disabled, with a note saying so)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import utcnow
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.options import WebhookOptions
from pb_headless.webhooks.records import DeliveryInfo
from pb_headless.webhooks.sender import Answer

_deliveries = webhook_tables.deliveries
_webhooks = webhook_tables.webhooks


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What a try needs of its endpoint, the secret included (never leaves the worker)."""

    name: str
    url: str
    secret: str


async def endpoints_by_id(database: Database, ids: Iterable[int]) -> dict[int, Endpoint]:
    query = sa.select(_webhooks.c.id, _webhooks.c.name, _webhooks.c.url, _webhooks.c.secret).where(
        _webhooks.c.id.in_(list(ids)), _webhooks.c.enabled.is_(True)
    )
    return {row[0]: Endpoint(row[1], row[2], row[3]) for row in await database.fetch_all(query)}


def outcome(delivery: DeliveryInfo, answer: Answer, options: WebhookOptions, now: datetime) -> dict[str, Any]:
    """The delivery's new columns after this try."""
    tries = delivery.tries + 1
    values: dict[str, Any] = {
        "tries": tries,
        "last_try_at": now,
        "answer_code": answer.code,
        "duration_ms": answer.duration_ms,
        "error": answer.error,
    }
    delay = None if answer.succeeded else options.next_delay(tries)
    if answer.succeeded:
        values.update(status="success", next_try_at=None)
    elif delay is None:
        values.update(status="failed", next_try_at=None)
    else:
        values.update(status="pending", next_try_at=now + timedelta(seconds=delay))
    return values


async def record_answer(
    database: Database, delivery: DeliveryInfo, answer: Answer, options: WebhookOptions
) -> None:
    now = utcnow()
    endpoint = _webhooks.c.id == delivery.webhook_id
    async with database.transaction():
        await database.execute(
            _deliveries.update()
            .where(_deliveries.c.id == delivery.id)
            .values(**outcome(delivery, answer, options, now))
        )
        await note_streak(database, delivery.webhook_id, answer.succeeded, now)
        if answer.succeeded:
            return
        note = (
            f"Disabled on {now:%Y-%m-%d %H:%M} UTC: every delivery had failed for "
            f"{_duration(options.disable_after)}. Enable it again once the receiver answers."
        )
        cutoff = now - options.disable_after
        await database.execute(
            _webhooks.update()
            .where(endpoint, _webhooks.c.enabled.is_(True), _webhooks.c.failing_since <= cutoff)
            .values(enabled=False, note=note, updated_at=now)
        )


async def note_streak(database: Database, webhook_id: int, succeeded: bool, now: datetime) -> None:
    """A success ends the endpoint's failure streak; a failure starts one unless one is running."""
    streak = None if succeeded else sa.func.coalesce(_webhooks.c.failing_since, now)
    endpoint = _webhooks.c.id == webhook_id
    await database.execute(_webhooks.update().where(endpoint).values(failing_since=streak))


def _duration(span: timedelta) -> str:
    if span >= timedelta(days=1) and span.total_seconds() % 86400 == 0:
        days = span.days
        return f"{days} day" + ("s" if days != 1 else "")
    return f"{int(span.total_seconds())} s"
