"""JSON-ready records: database values turned into what docs/query.md ("Values in answers") promises."""

from __future__ import annotations

import base64
import functools
import operator
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
_PLAIN_OR_NONE = _PLAIN | {type(None)}


def render_record(row: Row, fields: Iterable[FieldSpec]) -> dict[str, Any]:
    """The record as a dict in the order of `fields` (published order)."""
    return render_records((row,), fields)[0]


def render_records(rows: Iterable[Row], fields: Iterable[FieldSpec]) -> list[dict[str, Any]]:
    """Each row as `render_record` gives it, what depends on the fields alone worked out once per
    call: a relation's records. A plan's records are rendered by its `renderer`, made once per plan
    (`ShowPlan.render`)."""
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


Render = Callable[[Iterable[Row]], list[dict[str, Any]]]


def renderer(fields: Iterable[FieldSpec]) -> Render:
    """The rendering of rows with these fields: a record is a copy of its row where the row is a dict
    of exactly these columns (a compiled statement's rows), the types of the values that need no
    conversion are checked in one step (`itemgetter`, `map`), and only the fields of a converted kind,
    or a value of an unusual type, are converted one by one."""
    fields = tuple(fields)
    # `str()`: a column's name is SQLAlchemy's `quoted_name`, a str subclass orjson refuses as a key.
    names = tuple(str(field.name) for field in fields)
    pairs = [(str(field.name), field.name) for field in fields]
    converters = [(field, _converter(field)) for field in fields]
    converted = [(str(field.name), converter) for field, converter in converters if converter is not None]
    as_is = [str(field.name) for field, converter in converters if converter is None]
    unconverted = _getter([field.name for field, converter in converters if converter is None])
    plain = _PLAIN_OR_NONE

    def render(rows: Iterable[Row]) -> list[dict[str, Any]]:
        records = []
        copied: bool | None = None
        for row in rows:
            if copied is None:  # a page's rows all have the same columns: asked of the first alone
                copied = type(row) is dict and tuple(row) == names
            record = row.copy() if copied else {name: row[key] for name, key in pairs}  # type: ignore[attr-defined]
            if not plain.issuperset(map(type, unconverted(row))):
                for name in as_is:
                    value = record[name]
                    if type(value) not in plain:
                        record[name] = _json_value(value)
            for name, converter in converted:
                value = record[name]
                if value is not None:
                    record[name] = converter(value)
            records.append(record)
        return records

    return render


def _getter(keys: list[str]) -> Callable[[Row], tuple[Any, ...]]:
    """The row's values of `keys` as a tuple (`itemgetter` gives a lone value for one key)."""
    if len(keys) >= 2:
        return operator.itemgetter(*keys)
    if len(keys) == 1:
        key = keys[0]
        return lambda row: (row[key],)
    return lambda row: ()


def _converter(field: FieldSpec) -> Callable[[Any], Any] | None:
    """`render_value` for a field of a converted kind, its kind decided once (a datetime's text
    written directly); None: any other kind."""
    kind = field.kind
    if kind is FieldKind.BOOLEAN:
        return bool
    if kind is FieldKind.DECIMAL:
        return functools.partial(_decimal_value, field)
    if kind is FieldKind.FLOAT:
        return _float_value
    if kind is FieldKind.DATETIME:
        return _datetime_value
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


def _datetime_value(value: Any) -> Any:
    if type(value) is datetime:  # what `_json_value` writes, without its questions
        return _datetime_text(value)
    return _json_value(value)


def _datetime_text(value: datetime) -> str:
    # Naive datetimes in the database are UTC (the library's convention, docs/query.md): written
    # as `replace(tzinfo=UTC).isoformat()` would write them, without making that datetime.
    return value.isoformat() if value.tzinfo is not None else value.isoformat() + "+00:00"


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
        return _datetime_text(value)
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
