"""The body of a delivery: the event, and the record as the API's show renders it for an all-fields read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from databases import Database

from pb_headless.http.responses import json_bytes
from pb_headless.query import parse_query, plan_show, render_value
from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.executor import fetch_by_key
from pb_headless.registry import Catalog
from pb_headless.webhooks.records import DeliveryInfo


async def event_body(database: Database, dialect: str, catalog: Catalog, delivery: DeliveryInfo) -> bytes:
    """`{"type", "timestamp", "data": {"object", "id", "record"}}`. The record is read at send time,
    through the object's rules as they are now: null for a delete, and null when the row is no longer
    visible (deleted since, unpublished, outside the object's `query`)."""
    spec = catalog.get(delivery.object_name)
    record_id: Any = delivery.row_key
    record: dict[str, Any] | None = None
    if spec is not None:
        try:
            key = convert(spec.pk, delivery.row_key)
        except ConversionError:
            key = None
        if key is not None:
            record_id = render_value(spec.pk, key)
            if delivery.event != "delete":
                record, _ = await fetch_by_key(database, spec, plan_show(spec, parse_query([])), key, dialect)
    body = {
        "type": delivery.type,
        "timestamp": _iso(delivery.changed_at),
        "data": {"object": delivery.object_name, "id": record_id, "record": record},
    }
    return json_bytes(body)  # the API's own JSON: decimals as strings, as show answers them


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")
