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

TEST_EVENT = "test"  # a delivery's event for a test event (webhooks/test_event.py)


async def event_body(database: Database, dialect: str, catalog: Catalog, delivery: DeliveryInfo) -> bytes:
    """`{"type", "timestamp", "data": {"object", "id", "record"}}`. The record is read at send time,
    through the object's rules as they are now: null for a delete, and null when the row is no longer
    visible (deleted since, unpublished, outside the object's `query`)."""
    if delivery.event == TEST_EVENT:
        return test_body(delivery.object_name, delivery.changed_at)
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


def test_body(object_name: str, at: datetime) -> bytes:
    """A test event's body: the shape of a change with the type `<object>.test`, no record and no id,
    so a receiver that acts on `<object>.create|update|delete` leaves it alone."""
    data = {"object": object_name, "id": None, "record": None}
    return json_bytes({"type": f"{object_name}.{TEST_EVENT}", "timestamp": _iso(at), "data": data})


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")
