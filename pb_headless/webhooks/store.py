"""The webhook store: create (the secret is returned once), list, enable/disable, delete, the delivery
log and redeliver: what the administration area, the console script and a site's code call."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson
import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import utcnow
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.destinations import checked_url
from pb_headless.webhooks.locking import lock_for_writing
from pb_headless.webhooks.outbox import enabled_endpoints, skip_to_end
from pb_headless.webhooks.records import DeliveryInfo, WebhookInfo, delivery_from_row, webhook_from_row
from pb_headless.webhooks.signing import generate_secret

EVENTS = ("create", "update", "delete")
ALL_OBJECTS = "*"
NAME_MAX_LENGTH = 100
_OBJECT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_webhooks = webhook_tables.webhooks
_deliveries = webhook_tables.deliveries


class WebhookError(ValueError):
    """A webhook operation was refused; the message says why in one line."""


def parse_objects(objects: str | Iterable[str] | None) -> tuple[str, ...]:
    """Object names from a list or a comma-separated string; `*` (or nothing) is every object."""
    items = objects.split(",") if isinstance(objects, str) else list(objects or ())
    names = tuple(dict.fromkeys(item.strip() for item in items if item and item.strip()))
    if not names or ALL_OBJECTS in names:
        return (ALL_OBJECTS,)
    bad = [name for name in names if not _OBJECT_NAME.fullmatch(name)]
    if bad:
        raise WebhookError(f"'{bad[0]}' is not an object name")
    return names


def parse_events(events: str | Iterable[str] | None) -> tuple[str, ...]:
    """Events from a list or a comma-separated string; nothing is every event."""
    items = events.split(",") if isinstance(events, str) else list(events or ())
    chosen = {item.strip().lower() for item in items if item and item.strip()}
    if not chosen:
        return EVENTS
    unknown = sorted(chosen - set(EVENTS))
    if unknown:
        raise WebhookError(f"unknown event '{unknown[0]}': the events are create, update and delete")
    return tuple(event for event in EVENTS if event in chosen)


class WebhookStore:
    """Webhook endpoints and their deliveries on the host's database."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def create(
        self,
        name: str,
        url: str,
        *,
        objects: str | Iterable[str] | None = None,
        events: str | Iterable[str] | None = None,
        enabled: bool = True,
    ) -> tuple[WebhookInfo, str]:
        """Register an endpoint; returns it and its signing secret, which is never shown again."""
        name = _checked_name(name)
        try:
            url = checked_url(url)
        except ValueError as error:
            raise WebhookError(str(error)) from None
        secret = generate_secret()
        now = utcnow()
        values = {
            "name": name,
            "url": url,
            "objects": orjson.dumps(parse_objects(objects)).decode(),
            "events": orjson.dumps(parse_events(events)).decode(),
            "secret": secret,
            "enabled": enabled,
            "created_at": now,
            "updated_at": now,
        }
        async with self.database.transaction():
            await lock_for_writing(self.database)
            if await self._row(name) is not None:
                raise WebhookError(f"a webhook named '{name}' already exists")
            if enabled and not await enabled_endpoints(self.database):
                await skip_to_end(self.database)
            await self.database.execute(_webhooks.insert().values(**values))
        return await self.get(name), secret

    async def get(self, name: str) -> WebhookInfo:
        row = await self._row(name)
        if row is None:
            raise WebhookError(f"no webhook named '{name}'")
        return webhook_from_row(row._mapping, await self._last_statuses([row._mapping["id"]]))

    async def list(self) -> list[WebhookInfo]:
        rows = [row._mapping for row in await self.database.fetch_all(_webhooks.select().order_by("name"))]
        statuses = await self._last_statuses([row["id"] for row in rows])
        return [webhook_from_row(row, statuses) for row in rows]

    async def enable(self, name: str) -> WebhookInfo:
        """Deliver again; clears the note of an automatic disabling and the failure streak."""
        async with self.database.transaction():
            await lock_for_writing(self.database)
            if not await enabled_endpoints(self.database):
                await skip_to_end(self.database)
            await self._update(name, enabled=True, note=None, failing_since=None)
        return await self.get(name)

    async def disable(self, name: str) -> WebhookInfo:
        """Stop delivering; changes made while disabled are not sent later."""
        await self._update(name, enabled=False)
        return await self.get(name)

    async def delete(self, name: str) -> None:
        async with self.database.transaction():
            await lock_for_writing(self.database)
            webhook = await self.get(name)
            await self.database.execute(_deliveries.delete().where(_deliveries.c.webhook_id == webhook.id))
            await self.database.execute(_webhooks.delete().where(_webhooks.c.id == webhook.id))

    async def deliveries(self, name: str, limit: int = 100) -> Sequence[DeliveryInfo]:
        """The endpoint's newest deliveries first."""
        webhook = await self.get(name)
        query = (
            _deliveries.select()
            .where(_deliveries.c.webhook_id == webhook.id)
            .order_by(_deliveries.c.id.desc())
            .limit(limit)
        )
        return [delivery_from_row(row._mapping) for row in await self.database.fetch_all(query)]

    async def delivery(self, delivery_id: int | str) -> DeliveryInfo:
        number = _delivery_number(delivery_id)
        row = await self.database.fetch_one(_deliveries.select().where(_deliveries.c.id == number))
        if row is None:
            raise WebhookError(f"no delivery {delivery_id}")
        return delivery_from_row(row._mapping)

    async def redeliver(self, delivery_id: int | str) -> DeliveryInfo:
        """Try a delivery again at once, with a fresh set of retries (same `webhook-id`, so a receiver
        that already has it can tell)."""
        delivery = await self.delivery(delivery_id)
        query = (
            _deliveries.update()
            .where(_deliveries.c.id == delivery.id)
            .values(status="pending", tries=0, next_try_at=utcnow(), error="redelivery requested")
        )
        await self.database.execute(query)
        return await self.delivery(delivery.id)

    async def _row(self, name: str) -> Any:
        return await self.database.fetch_one(_webhooks.select().where(_webhooks.c.name == name))

    async def _update(self, name: str, **changes: Any) -> None:
        async with self.database.transaction():
            await lock_for_writing(self.database)
            await self.get(name)
            query = _webhooks.update().where(_webhooks.c.name == name).values(updated_at=utcnow(), **changes)
            await self.database.execute(query)

    async def _last_statuses(self, ids: Sequence[int]) -> Mapping[int, tuple[str, datetime | None]]:
        """Each endpoint's newest delivery: its status and when it was last tried."""
        if not ids:
            return {}
        newest = (
            sa.select(sa.func.max(_deliveries.c.id))
            .where(_deliveries.c.webhook_id.in_(ids))
            .group_by(_deliveries.c.webhook_id)
        )
        query = sa.select(_deliveries.c.webhook_id, _deliveries.c.status, _deliveries.c.last_try_at).where(
            _deliveries.c.id.in_(newest)
        )
        return {row[0]: (row[1], row[2]) for row in await self.database.fetch_all(query)}


def _checked_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise WebhookError("a webhook needs a name")
    if len(name) > NAME_MAX_LENGTH:
        raise WebhookError(f"a webhook name is at most {NAME_MAX_LENGTH} characters")
    return name


def _delivery_number(delivery_id: int | str) -> int:
    text = str(delivery_id).strip()
    if not text.isdigit() or len(text) > 18:
        raise WebhookError(f"'{delivery_id}' is not a delivery id (a whole number, as the log shows)")
    return int(text)
