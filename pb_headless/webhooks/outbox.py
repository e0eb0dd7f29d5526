"""Fan-out: each new change log entry becomes one pending delivery per endpoint that wants it.

Entries are read through the change log's one reader (changes/log.py `ChangeLog.entries_after`): up
to the head, every one of them committed, in commit order; the cursor moves to the last entry read,
or to the head when fewer came back than asked for, so no entry is skipped or read twice. The cursor
row is locked for the whole step, so with several instances each entry is fanned out by exactly one
of them; the deliveries' unique key (endpoint, position, object) makes a repeat impossible even so.
Deliveries are written in the same transaction as the cursor's move: an instance killed in between
leaves neither, and the next step does it again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from databases import Database

from pb_headless.changes.feed import row_columns, selected
from pb_headless.changes.log import Change, ChangeLog
from pb_headless.database.backends import backend_for
from pb_headless.database.database_errors import is_duplicate_key
from pb_headless.database.dialect import utcnow
from pb_headless.query.planner import ListPlan
from pb_headless.registry import Catalog, ObjectSpec
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.filters import selection_plan
from pb_headless.webhooks.locking import lock_for_writing
from pb_headless.webhooks.records import WebhookInfo, webhook_from_row
from pb_headless.webhooks.signing import message_id

log = logging.getLogger("pb_headless")

FAN_OUT_BATCH = 500
PLANS = 100  # the endpoints' filter plans kept per object
_cursor = webhook_tables.cursor
_webhooks = webhook_tables.webhooks
_deliveries = webhook_tables.deliveries


async def fan_out(database: Database, catalog: Catalog, limit: int = FAN_OUT_BATCH) -> int:
    """Turn up to `limit` new entries into deliveries; returns how many entries were read."""
    log = ChangeLog.of(database)
    if not await _has_news(database, log):
        return 0  # the lock is taken only when there is work: SQLite's other writers are not held up
    async with database.transaction():
        position = await _locked_position(database)
        if position is not None:
            entries, head = await log.entries_after(position, limit)
            reached = entries[-1].position if len(entries) == limit else head
            if reached <= position:
                return 0
            if entries:
                endpoints = await enabled_endpoints(database)
                rows = await _deliveries_of(database, entries, endpoints, catalog)
                if rows:
                    await database.execute_many(_deliveries.insert(), rows)
            await database.execute(_cursor.update().where(_cursor.c.id == 1).values(position=reached))
            return len(entries)
    await _start_cursor(database, log)
    return 0


async def _has_news(database: Database, log: ChangeLog) -> bool:
    row = await database.fetch_one(_cursor.select().where(_cursor.c.id == 1))
    return row is None or (await log.bounds()).head > int(row._mapping["position"])


async def _locked_position(database: Database) -> int | None:
    query = _cursor.select().where(_cursor.c.id == 1)
    if backend_for(database).locks_rows:
        query = query.with_for_update()
    else:
        await lock_for_writing(database)  # one writer at a time: two processes never both fan out
    row = await database.fetch_one(query)
    return None if row is None else int(row._mapping["position"])


async def _start_cursor(database: Database, log: ChangeLog) -> None:
    """The first step ever starts at the log's head: endpoints get changes made after they exist."""
    try:
        async with database.transaction():  # a savepoint when nested: a lost race spoils nothing else
            await database.execute(_cursor.insert().values(id=1, position=(await log.bounds()).head))
    except Exception as error:  # another instance started it at the same moment
        if not is_duplicate_key(error):
            raise


async def skip_to_end(database: Database) -> None:
    """Move the cursor to the log's head; called when the first endpoint is enabled, since no one
    fanned out while none was (an endpoint gets the changes made after it is enabled)."""
    log = ChangeLog.of(database)
    row = await database.fetch_one(_cursor.select().where(_cursor.c.id == 1))
    if row is None:
        await _start_cursor(database, log)
        return
    end = _cursor.update().where(_cursor.c.id == 1).values(position=(await log.bounds()).head)
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
        for object_name in by_table.get(entry.table, ()):
            if not entry.is_seen_by(object_name):
                continue
            for endpoint in endpoints:
                event = entry.op
                if endpoint.filter is not None:
                    selection = selections.get((object_name, endpoint.filter))
                    if selection is None:  # not this object's endpoint, or a filter it no longer takes
                        continue
                    chosen, columns = selection
                    if entry.key not in chosen:
                        if entry.op == "create":
                            continue  # a new row not selected: the receiver cannot hold it
                        if columns is not None and entry.kept_out_of(object_name, columns):
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
        keys = [entry.key for entry in entries if entry.table == spec.table.name]
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
        chosen = await selected(database, backend_for(database).name, spec, plan, keys)
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
        "row_key": entry.key,
        "changed_at": entry.at.replace(tzinfo=None),  # naive UTC, as every library table keeps time
        "status": "pending",
        "tries": 0,
        "next_try_at": now,
        "created_at": now,
    }
