"""Fan-out: each new change log entry becomes one pending delivery per endpoint that wants it.

The cursor row is locked for the whole step, so with several instances each entry is fanned out by
exactly one of them; the deliveries' unique key (endpoint, position, object) makes a repeat impossible
even so. Deliveries are written in the same transaction as the cursor's move: an instance killed in
between leaves neither, and the next step does it again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from databases import Database

from pb_headless.changes.feed import row_columns, selected
from pb_headless.changes.visibility import left_alone
from pb_headless.database.database_errors import is_duplicate_key
from pb_headless.database.dialect import dialect_name, utcnow
from pb_headless.query.planner import ListPlan
from pb_headless.registry import Catalog, ObjectSpec
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.filters import selection_plan
from pb_headless.webhooks.locking import lock_for_writing
from pb_headless.webhooks.records import WebhookInfo, webhook_from_row
from pb_headless.webhooks.signing import message_id
from pb_headless.webhooks.source import Change, changes_after, latest_position

log = logging.getLogger("pb_headless")

FAN_OUT_BATCH = 500
PLANS = 100  # the endpoints' filter plans kept per object
_cursor = webhook_tables.cursor
_webhooks = webhook_tables.webhooks
_deliveries = webhook_tables.deliveries


async def fan_out(database: Database, catalog: Catalog, limit: int = FAN_OUT_BATCH) -> int:
    """Turn up to `limit` new entries into deliveries; returns how many entries were read."""
    if not await _has_news(database):
        return 0  # the lock is taken only when there is work: SQLite's other writers are not held up
    async with database.transaction():
        position = await _locked_position(database)
        if position is not None:
            entries = await changes_after(database, position, limit)
            if not entries:
                return 0
            endpoints = await enabled_endpoints(database)
            rows = await _deliveries_of(database, entries, endpoints, catalog)
            if rows:
                await database.execute_many(_deliveries.insert(), rows)
            moved = _cursor.update().where(_cursor.c.id == 1).values(position=entries[-1].position)
            await database.execute(moved)
            return len(entries)
    await _start_cursor(database)
    return 0


async def _has_news(database: Database) -> bool:
    row = await database.fetch_one(_cursor.select().where(_cursor.c.id == 1))
    return row is None or bool(await changes_after(database, int(row._mapping["position"]), 1))


async def _locked_position(database: Database) -> int | None:
    query = _cursor.select().where(_cursor.c.id == 1)
    if dialect_name(database) == "sqlite":
        await lock_for_writing(database)  # one writer at a time: two processes never both fan out
    else:
        query = query.with_for_update()
    row = await database.fetch_one(query)
    return None if row is None else int(row._mapping["position"])


async def _start_cursor(database: Database) -> None:
    """The first step ever starts at the log's end: endpoints get changes made after they exist."""
    try:
        async with database.transaction():  # a savepoint when nested: a lost race spoils nothing else
            await database.execute(_cursor.insert().values(id=1, position=await latest_position(database)))
    except Exception as error:  # another instance started it at the same moment
        if not is_duplicate_key(error):
            raise


async def skip_to_end(database: Database) -> None:
    """Move the cursor to the log's end; called when the first endpoint is enabled, since no one
    fanned out while none was (an endpoint gets the changes made after it is enabled)."""
    row = await database.fetch_one(_cursor.select().where(_cursor.c.id == 1))
    if row is None:
        await _start_cursor(database)
        return
    end = _cursor.update().where(_cursor.c.id == 1).values(position=await latest_position(database))
    await database.execute(end)


async def enabled_endpoints(database: Database) -> list[WebhookInfo]:
    rows = await database.fetch_all(_webhooks.select().where(_webhooks.c.enabled.is_(True)))
    return [webhook_from_row(row._mapping, {}) for row in rows]


async def _deliveries_of(
    database: Database, entries: Sequence[Change], endpoints: Sequence[WebhookInfo], catalog: Catalog
) -> list[dict[str, Any]]:
    by_table: dict[str, list[str]] = {}
    for name, spec in catalog.items():  # several objects may publish one table
        by_table.setdefault(spec.table.name, []).append(name)
    selections = await _selections(database, entries, endpoints, catalog)
    now = utcnow()
    rows = []
    for entry in entries:
        for object_name in by_table.get(entry.table_name, ()):
            if not entry.is_seen_by(object_name):
                continue
            for endpoint in endpoints:
                event = entry.op
                if endpoint.filter is not None:
                    selection = selections.get((object_name, endpoint.filter))
                    if selection is None:  # not this object's endpoint, or a filter it no longer takes
                        continue
                    chosen, columns = selection
                    if entry.row_key not in chosen:
                        if entry.op == "create":
                            continue  # a new row not selected: the receiver cannot hold it
                        if columns is not None and left_alone(
                            entry.op,
                            entry.unchanged,
                            entry.seen_before,
                            entry.seen_after,
                            object_name,
                            columns,
                        ):
                            continue  # not selected after, and its filtered columns unchanged: nor before
                        event = "delete"  # not selected now: it left the selection, or may have
                if endpoint.wants(object_name, event):
                    rows.append(_delivery(endpoint, object_name, entry, event, now))
    return rows


async def _selections(
    database: Database, entries: Sequence[Change], endpoints: Sequence[WebhookInfo], catalog: Catalog
) -> dict[tuple[str, str], tuple[set[str], frozenset[str] | None]]:
    """For each filter of an endpoint and its object, the keys of the batch's rows it selects now (one
    statement per filter, bounded by the batch's keys of that object's table, docs/webhooks.md), and
    the row's own columns the filter reads (None: it reads another table too)."""
    found: dict[tuple[str, str], tuple[set[str], frozenset[str] | None]] = {}
    for endpoint in endpoints:
        if endpoint.filter is None or (endpoint.objects[0], endpoint.filter) in found:
            continue
        spec = catalog.get(endpoint.objects[0])
        if spec is None:
            continue
        keys = [entry.row_key for entry in entries if entry.table_name == spec.table.name]
        if not keys:
            continue
        plan = _plan(spec, endpoint.filter)
        if plan is None:
            log.warning(
                "pb_headless: the webhook '%s' has a filter %s no longer takes (%s): nothing is sent for it",
                endpoint.name,
                spec.name,
                endpoint.filter,
            )
            continue
        chosen = await selected(database, dialect_name(database), spec, plan, keys)
        found[(spec.name, endpoint.filter)] = (chosen, row_columns(spec, plan))
    return found


def _plan(spec: ObjectSpec, written: str) -> ListPlan | None:
    """The list plan of a stored filter, worked out once per registry version (kept on the spec, at
    most PLANS of them); None when the object refuses or ignores part of it now."""
    plans = spec.derived.setdefault("webhooks.filters", {})
    if written not in plans:
        plan = selection_plan(spec, written)
        if len(plans) >= PLANS:
            plans.clear()
        plans[written] = None if plan.details or plan.ignored else plan
    result: ListPlan | None = plans[written]
    return result


def _delivery(endpoint: WebhookInfo, object_name: str, entry: Change, event: str, now: Any) -> dict[str, Any]:
    return {
        "webhook_id": endpoint.id,
        "position": entry.position,
        "message_id": message_id(),
        "object_name": object_name,
        "event": event,
        "row_key": entry.row_key,
        "changed_at": entry.changed_at,
        "status": "pending",
        "tries": 0,
        "next_try_at": now,
        "created_at": now,
    }
