"""Converts JSON values into the Python values a column stores (int, Decimal, date, datetime...)."""

from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from collections.abc import Callable
from decimal import Decimal

from pb_headless.rules.columns import ARRAY, BOOLEAN, FRACTION, INTEGER, OBJECT, STRING, ColumnKind

# Plain decimal notation only: an exponent in a string is more likely a typo than a price.
NUMERIC_STRING = re.compile(r"-?[0-9]+(\.[0-9]+)?", re.ASCII)
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
TIME = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])(?::([0-5][0-9])(?:\.([0-9]+))?)?", re.ASCII)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII | re.IGNORECASE)
_DATETIME = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})"
    r"(?:[Tt ](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:[.,](?P<fraction>[0-9]+))?)?"
    r"(?P<offset>[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?",
    re.ASCII,
)


class Invalid(ValueError):
    """The value does not convert; the caller reports the column kind's type message."""


def json_atom(value: object) -> str | None:
    """The JSON type of a parsed value; None for what JSON cannot carry (and for null)."""
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return INTEGER if value.is_integer() else FRACTION
    if isinstance(value, Decimal):
        return INTEGER if value.is_finite() and value == value.to_integral_value() else FRACTION
    if isinstance(value, str):
        return STRING
    return ARRAY if isinstance(value, list) else OBJECT if isinstance(value, dict) else None


def converter_for(kind: ColumnKind) -> Callable[[object], object]:
    """The conversion of a value whose JSON type the kind already accepts."""
    if kind.name == "datetime":
        return lambda value: to_datetime(value, aware=kind.timezone)
    if kind.name == "uuid":
        return lambda value: to_uuid(value, as_uuid=kind.as_uuid)
    return _CONVERTERS.get(kind.name, _as_is)


def convert_option(kind: ColumnKind, text: str) -> object:
    """An in/not_in value from a rule string, as the column stores it; raises Invalid."""
    if kind.name in ("integer", "float"):
        if not NUMERIC_STRING.fullmatch(text) or (kind.name == "integer" and "." in text):
            raise Invalid(text)
        return int(text) if kind.name == "integer" else float(text)
    return converter_for(kind)(text)


def _as_is(value: object) -> object:
    return value


def to_integer(value: object) -> int:
    return int(value)  # type: ignore[call-overload]


def to_float(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        raise Invalid(value) from None
    if not math.isfinite(number):
        raise Invalid(value)
    return number


def to_decimal(value: object) -> Decimal:
    if isinstance(value, str):
        if not NUMERIC_STRING.fullmatch(value):
            raise Invalid(value)
        return Decimal(value)
    if isinstance(value, float):
        # repr() is the shortest text that reads back as the same float, so 19.99 stays Decimal('19.99').
        if not math.isfinite(value):
            raise Invalid(value)
        return Decimal(repr(value))
    if isinstance(value, Decimal) and not value.is_finite():
        raise Invalid(value)
    return Decimal(value)  # type: ignore[arg-type]


def to_date(value: object) -> dt.date:
    if not isinstance(value, str) or not DATE.fullmatch(value):
        raise Invalid(value)
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise Invalid(value) from None


def to_time(value: object) -> dt.time:
    match = TIME.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise Invalid(value)
    hour, minute, second, fraction = match.groups()
    return dt.time(int(hour), int(minute), int(second or 0), _microseconds(fraction))


def to_datetime(value: object, *, aware: bool) -> dt.datetime:
    """ISO 8601 to UTC; no offset means UTC, a date alone means midnight UTC (CONTRACT §11)."""
    match = _DATETIME.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise Invalid(value)
    parts = match.groupdict()
    try:
        day = dt.date.fromisoformat(parts["date"])
        moment = dt.datetime(
            day.year,
            day.month,
            day.day,
            int(parts["hour"] or 0),
            int(parts["minute"] or 0),
            int(parts["second"] or 0),
            _microseconds(parts["fraction"]),
            tzinfo=_offset(parts["offset"]),
        )
        # Stored in UTC always: SQLite's DATETIME drops the offset, which would shift the instant.
        moment = moment.astimezone(dt.UTC)
    except (ValueError, OverflowError):
        raise Invalid(value) from None
    return moment if aware else moment.replace(tzinfo=None)


def _offset(text: str | None) -> dt.tzinfo:
    if text is None or text in ("Z", "z"):
        return dt.UTC
    digits = text[1:].replace(":", "")
    if int(digits[2:]) > 59:
        raise ValueError(text)
    delta = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return dt.timezone(-delta if text[0] == "-" else delta)


def _microseconds(fraction: str | None) -> int:
    # Finer than a microsecond is truncated, as databases do.
    return int((fraction or "0")[:6].ljust(6, "0"))


def to_uuid(value: object, *, as_uuid: bool) -> uuid.UUID | str:
    if not isinstance(value, str) or not UUID.fullmatch(value):
        raise Invalid(value)
    parsed = uuid.UUID(value)
    return parsed if as_uuid else str(parsed)


_CONVERTERS: dict[str, Callable[[object], object]] = {
    "integer": to_integer,
    "float": to_float,
    "decimal": to_decimal,
    "date": to_date,
    "time": to_time,
}
