"""The webhook store: create (the secret is returned once), edit, list, enable/disable, delete, the
delivery log, redeliver and the test event: what the administration area, the console script and a
site's code call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import utcnow
from pb_headless.registry import ObjectSpec
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.destinations import checked_url
from pb_headless.webhooks.filters import checked_filter
from pb_headless.webhooks.locking import lock_for_writing
from pb_headless.webhooks.outbox import enabled_endpoints, skip_to_end
from pb_headless.webhooks.records import (
    DeliveryInfo,
    Statuses,
    WebhookInfo,
    delivery_from_row,
    webhook_from_row,
)
from pb_headless.webhooks.selection import (
    ALL_OBJECTS,
    EVENTS,
    WebhookError,
    known_objects,
    parse_events,
    parse_objects,
    test_event_object,
)
from pb_headless.webhooks.sender import missing_sender
from pb_headless.webhooks.signing import generate_secret
from pb_headless.webhooks.test_event import send_test_event

__all__ = ["ALL_OBJECTS", "EVENTS", "WebhookError", "WebhookStore", "parse_events", "parse_objects"]

NAME_MAX_LENGTH = 100
Known = Iterable[str] | Mapping[str, ObjectSpec] | None
_webhooks = webhook_tables.webhooks
_deliveries = webhook_tables.deliveries


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
        known: Known = None,
        filter: str | None = None,
    ) -> tuple[WebhookInfo, str]:
        """Register an endpoint; returns it and its signing secret, which is never shown again.
        `known`: the objects the site publishes (their names, or the catalog, which also checks a
        filter), when the caller knows them; another is refused. `filter`: a list's filters and
        search as a query string (`filter[category]=news`), for an endpoint of one object."""
        name = _checked_name(name)
        url = _url(url)
        chosen = known_objects(parse_objects(objects), known)
        written = checked_filter(filter, chosen, known)
        _require_sender()
        secret = generate_secret()
        now = utcnow()
        values = {
            "name": name,
            "url": url,
            "objects": orjson.dumps(chosen).decode(),
            "events": orjson.dumps(parse_events(events)).decode(),
            "filter": written,
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

    async def update(
        self,
        name: str,
        *,
        url: str | None = None,
        objects: str | Iterable[str] | None = None,
        events: str | Iterable[str] | None = None,
        enabled: bool | None = None,
        known: Known = None,
        filter: str | None = None,
    ) -> WebhookInfo:
        """Change what is given (None keeps it); the secret and the delivery log stay. `objects="*"` is
        every object; `filter=""` removes the filter; `known` as for `create`."""
        changes: dict[str, Any] = {}
        current = await self.get(name)
        if url is not None:
            changes["url"] = _url(url)
        chosen = current.objects
        if objects is not None:
            chosen = known_objects(parse_objects(objects), known)
            changes["objects"] = orjson.dumps(chosen).decode()
        if filter is not None or (objects is not None and current.filter is not None):
            changes["filter"] = checked_filter(current.filter if filter is None else filter, chosen, known)
        if events is not None:
            changes["events"] = orjson.dumps(parse_events(events)).decode()
        if enabled and not current.enabled:
            return await self._enable(name, **changes)
        if enabled is False and current.enabled:
            changes["enabled"] = False
        if changes:
            await self._update(name, **changes)
        return await self.get(name)

    async def enable(self, name: str) -> WebhookInfo:
        """Deliver again; clears the note of an automatic disabling and the failure streak."""
        return await self._enable(name)

    async def _enable(self, name: str, **changes: Any) -> WebhookInfo:
        _require_sender()
        async with self.database.transaction():
            await lock_for_writing(self.database)
            if not await enabled_endpoints(self.database):
                await skip_to_end(self.database)
            await self._update(name, enabled=True, note=None, failing_since=None, **changes)
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

    async def send_test(
        self, name: str, *, object_name: str | None = None, known: Iterable[str] | None = None
    ) -> DeliveryInfo:
        """POST a signed test event (`<object>.test`) to the endpoint now, once, and record it in its
        log (webhooks/test_event.py). The object is `object_name`, else the endpoint's first, else (an
        endpoint of every object) the first of `known`."""
        _require_sender()
        webhook = await self.get(name)
        return await send_test_event(self.database, webhook, test_event_object(webhook, object_name, known))

    async def _row(self, name: str) -> Any:
        return await self.database.fetch_one(_webhooks.select().where(_webhooks.c.name == name))

    async def _update(self, name: str, **changes: Any) -> None:
        async with self.database.transaction():
            await lock_for_writing(self.database)
            await self.get(name)
            query = _webhooks.update().where(_webhooks.c.name == name).values(updated_at=utcnow(), **changes)
            await self.database.execute(query)

    async def _last_statuses(self, ids: Sequence[int]) -> Statuses:
        """Each endpoint's newest delivery (its status and when it was last tried), and the error of its
        newest try that failed."""
        if not ids:
            return {}
        mine = _deliveries.c.webhook_id.in_(ids)
        newest = sa.select(sa.func.max(_deliveries.c.id)).where(mine).group_by(_deliveries.c.webhook_id)
        failed = (
            sa.select(sa.func.max(_deliveries.c.id))
            .where(mine, _deliveries.c.error.is_not(None), _deliveries.c.status != "success")
            .group_by(_deliveries.c.webhook_id)
        )
        columns = (_deliveries.c.webhook_id, _deliveries.c.status, _deliveries.c.last_try_at)
        rows = await self.database.fetch_all(sa.select(*columns).where(_deliveries.c.id.in_(newest)))
        errors = await self.database.fetch_all(
            sa.select(_deliveries.c.webhook_id, _deliveries.c.error).where(_deliveries.c.id.in_(failed))
        )
        error_of = {row[0]: row[1] for row in errors}
        return {row[0]: (row[1], row[2], error_of.get(row[0])) for row in rows}


def _url(url: str) -> str:
    try:
        return checked_url(url)
    except ValueError as error:
        raise WebhookError(str(error)) from None


def _require_sender() -> None:
    """An endpoint that could never be delivered to is refused when it is registered or enabled, with
    the command that fixes it, rather than failing each try later."""
    missing = missing_sender()
    if missing:
        raise WebhookError(missing)


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
