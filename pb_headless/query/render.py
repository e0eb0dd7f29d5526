"""JSON-ready records: database values turned into what docs/query.md ("Values in answers") promises."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Protocol
from uuid import UUID

from pb_headless.fields import FieldKind
from pb_headless.registry.spec import FieldSpec


class Row(Protocol):
    """A result row read by column name (`databases` records; SQLAlchemy's `row._mapping`)."""

    def __getitem__(self, key: str, /) -> Any: ...


def render_record(row: Row, fields: Iterable[FieldSpec]) -> dict[str, Any]:
    """The record as a dict in the order of `fields` (published order)."""
    # `str()`: a column's name is SQLAlchemy's `quoted_name`, a str subclass orjson refuses as a key.
    return {str(field.name): render_value(field, row[field.name]) for field in fields}


def render_value(field: FieldSpec, value: Any) -> Any:
    if value is None:
        return None
    if field.kind is FieldKind.BOOLEAN:
        return bool(value)  # SQLite and MariaDB hand booleans back as 0 and 1
    if field.kind is FieldKind.DECIMAL and isinstance(value, (Decimal, float, int)):
        return _decimal_text(field, value)
    if field.kind is FieldKind.FLOAT and isinstance(value, Decimal):
        return float(value)
    return _json_value(value)


def _decimal_text(field: FieldSpec, value: Decimal | float | int) -> str:
    """`"19.99"`, with the scale the column stores (`"20.00"`), never in exponent notation."""
    if not isinstance(value, Decimal):
        # A float or int from a driver without native decimals: give it the column's scale.
        scale = field.description.scale
        if scale is not None and isinstance(value, float):
            return f"{value:.{scale}f}"
        value = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    return format(value, "f")


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        # Naive datetimes in the database are UTC (the library's convention, docs/query.md).
        return (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).isoformat()
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, timedelta):
        return value.total_seconds()
    return value
