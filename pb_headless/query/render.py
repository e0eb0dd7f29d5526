"""JSON-ready records: database values turned into what docs/query.md ("Values in answers") promises."""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable, Iterable
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


def render_record(row: Row, fields: Iterable[FieldSpec]) -> dict[str, Any]:
    """The record as a dict in the order of `fields` (published order)."""
    return render_records((row,), fields)[0]


def render_records(rows: Iterable[Row], fields: Iterable[FieldSpec]) -> list[dict[str, Any]]:
    """Each row as `render_record` gives it; what depends on the fields is worked out once: the
    conversion of each field of a converted kind (`render_value`, chosen by its kind here)."""
    # `str()`: a column's name is SQLAlchemy's `quoted_name`, a str subclass orjson refuses as a key.
    columns = [(str(field.name), field.name, _converter(field)) for field in fields]
    plain = _PLAIN
    records = []
    for row in rows:
        record = {}
        for name, key, converter in columns:
            value = row[key]
            if value is None or (converter is None and type(value) in plain):
                record[name] = value
            elif converter is None:
                record[name] = _json_value(value)
            else:
                record[name] = converter(value)
        records.append(record)
    return records


def _converter(field: FieldSpec) -> Callable[[Any], Any] | None:
    """`render_value` for a field of a converted kind, its kind decided once; None: any other kind."""
    kind = field.kind
    if kind is FieldKind.BOOLEAN:
        return bool
    if kind is FieldKind.DECIMAL:
        return functools.partial(_decimal_value, field)
    if kind is FieldKind.FLOAT:
        return _float_value
    return None


def _decimal_value(field: FieldSpec, value: Any) -> Any:
    if isinstance(value, (Decimal, float, int)):
        return _decimal_text(field, value)
    return _json_value(value)


def _float_value(value: Any) -> Any:
    # A float column MariaDB reflects as DOUBLE comes back as a Decimal: it must still be a JSON number.
    if type(value) is float:
        return value
    if isinstance(value, Decimal):
        return float(value)
    return _json_value(value)


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
