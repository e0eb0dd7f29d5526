"""JSON-ready records: database values turned into what docs/query.md ("Values in answers") promises."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Protocol
from uuid import UUID

from pb_headless.fields import FieldKind
from pb_headless.registry.spec import FieldSpec


class Row(Protocol):
    """A result row read by column name (`databases` records; SQLAlchemy's `row._mapping`)."""

    def __getitem__(self, key: str, /) -> Any: ...


# Values JSON takes as they are; a field of another kind may still need them changed (a boolean
# stored as 0/1, a decimal read as a float).
_PLAIN = frozenset({str, int, float, bool})
# A float column MariaDB reflects as DOUBLE comes back as a Decimal, which must still be a JSON number.
_CONVERTED_KINDS = frozenset({FieldKind.BOOLEAN, FieldKind.DECIMAL, FieldKind.FLOAT})


def render_record(row: Row, fields: Iterable[FieldSpec]) -> dict[str, Any]:
    """The record as a dict in the order of `fields` (published order)."""
    return render_records((row,), fields)[0]


def render_records(rows: Iterable[Row], fields: Iterable[FieldSpec]) -> list[dict[str, Any]]:
    """Each row as `render_record` gives it; what depends on the fields is worked out once."""
    # `str()`: a column's name is SQLAlchemy's `quoted_name`, a str subclass orjson refuses as a key.
    columns = [(str(field.name), field, field.kind in _CONVERTED_KINDS) for field in fields]
    plain = _PLAIN
    records = []
    for row in rows:
        record = {}
        for name, field, converted in columns:
            value = row[field.name]
            if converted:
                record[name] = render_value(field, value)
            elif value is None or type(value) in plain:
                record[name] = value
            else:
                record[name] = _json_value(value)
        records.append(record)
    return records


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
        # Naive datetimes in the database are UTC (the library's convention, docs/query.md): written
        # as `replace(tzinfo=UTC).isoformat()` would write them, without making that datetime.
        return value.isoformat() if value.tzinfo is not None else value.isoformat() + "+00:00"
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
