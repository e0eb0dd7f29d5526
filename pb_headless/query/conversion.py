"""Query-string text to Python values by field kind, with the message a client reads when it fails."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import ROUND_DOWN, Context, Decimal, localcontext
from typing import Any
from uuid import UUID

import sqlalchemy as sa

from pb_headless.registry.spec import BOOLEAN, DATE, DATETIME, DECIMAL, INTEGER, NUMBER, STRING, FieldSpec

# Every supported database stores at most a signed 64-bit integer; anything wider cannot match and
# would make the driver fail, so it is refused rather than passed on.
SMALLEST_INTEGER, LARGEST_INTEGER = -(2**63), 2**63 - 1
TRUE_WORDS, FALSE_WORDS = frozenset({"true", "1"}), frozenset({"false", "0"})

_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.,]+(?:Z|[+-][0-9:]+)?)?", re.IGNORECASE)
# An unencoded `+` in a query string arrives as a space: `...T10:00:00 02:00` meant `+02:00`.
_OFFSET_PLUS_AS_SPACE = re.compile(r"(.+[T ][0-9:.,]+) ([0-9]{2}:?[0-9]{2})", re.IGNORECASE)


class ConversionError(ValueError):
    """A value that does not convert; the message is the one shown in 422 `details`."""


def convert(field: FieldSpec, text: str) -> Any:
    """The value of `text` for `field`'s kind; text (and unknown kinds) is taken as written."""
    if field.kind == STRING:
        return _as_text(field.column.type, text)
    if field.kind == DECIMAL:
        return _fit_decimal(_as_decimal(text), field.column.type)
    converter = _CONVERTERS.get(field.kind)
    return text if converter is None else converter(text)


def parse_flag(text: str) -> bool | None:
    """`true|1` → True, `false|0` → False (any case), anything else → None."""
    word = text.strip().lower()
    return True if word in TRUE_WORDS else False if word in FALSE_WORDS else None


def _as_integer(text: str) -> int:
    text = text.strip()
    if _INTEGER.fullmatch(text):
        value = int(text)
        if SMALLEST_INTEGER <= value <= LARGEST_INTEGER:
            return value
    raise ConversionError("must be an integer")


def _as_number(text: str) -> float:
    text = text.strip()
    if _NUMBER.fullmatch(text):
        value = float(text)
        if value not in (float("inf"), float("-inf")):
            return value
    raise ConversionError("must be a number")


def _as_decimal(text: str) -> Decimal:
    # No exponent: `1e999999` is a valid Decimal that no database column can hold.
    text = text.strip()
    if _DECIMAL.fullmatch(text):
        return Decimal(text)
    raise ConversionError("must be a number")


def _fit_decimal(value: Decimal, column_type: sa.types.TypeEngine[Any]) -> Decimal:
    """A value that compares with every storable value of a `NUMERIC(p, s)` column as `value` does,
    with no more digits than the column has.

    MariaDB truncates a literal of more than 65 digits, with a warning; the column's own values all lie
    strictly between -10^(p-s) and 10^(p-s), on multiples of 10^-s, so a value outside that range can
    become its edge, and one between two multiples can become the midpoint of the two.
    """
    precision, scale = getattr(column_type, "precision", None), getattr(column_type, "scale", None) or 0
    if not isinstance(precision, int) or not 0 <= scale <= precision:
        return value
    with localcontext(Context(prec=precision + 2)):
        edge = Decimal(10) ** (precision - scale)
        if value.copy_abs() >= edge:
            return edge.copy_sign(value)
        step = Decimal(10) ** -scale
        storable = value.quantize(step, rounding=ROUND_DOWN)
        return value if storable == value else storable + (step / 2).copy_sign(value)


def _as_boolean(text: str) -> bool:
    flag = parse_flag(text)
    if flag is None:
        raise ConversionError("must be true, false, 1 or 0")
    return flag


def _as_date(text: str) -> date:
    text = text.strip()
    try:
        if _DATE.fullmatch(text):
            return date.fromisoformat(text)
    except ValueError:
        pass
    raise ConversionError("must be a date (YYYY-MM-DD)")


def _as_datetime(text: str) -> datetime:
    """An aware UTC datetime: a date alone is midnight UTC, a time without an offset is UTC."""
    text = text.strip()
    plus_as_space = _OFFSET_PLUS_AS_SPACE.fullmatch(text)
    if plus_as_space:
        text = f"{plus_as_space[1]}+{plus_as_space[2]}"
    try:
        if _DATETIME.fullmatch(text):
            value = datetime.fromisoformat(text)
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except (ValueError, OverflowError):
        pass
    raise ConversionError("must be a date-time (ISO 8601, e.g. 2024-05-01T12:00:00+00:00)")


def literal_text(text: str) -> str:
    """Text for `like` and `search`, taken as written."""
    # PostgreSQL refuses NUL in text; no stored text can contain it, so say so instead of failing.
    if "\x00" in text:
        raise ConversionError("must not contain NUL characters")
    return text


def _as_text(column_type: sa.types.TypeEngine[Any], text: str) -> Any:
    """Text as written, except where the column's type only takes certain strings."""
    literal_text(text)
    if isinstance(column_type, sa.Uuid):
        try:
            return UUID(text.strip()) if column_type.as_uuid else str(UUID(text.strip()))
        except ValueError:
            raise ConversionError("must be a UUID") from None
    if isinstance(column_type, sa.Enum) and column_type.enums and text not in column_type.enums:
        # A native enum refuses other labels; name the ones it takes.
        raise ConversionError(f"must be one of: {', '.join(column_type.enums)}")
    return text


_CONVERTERS: dict[str, Callable[[str], Any]] = {
    INTEGER: _as_integer, NUMBER: _as_number, DECIMAL: _as_decimal, BOOLEAN: _as_boolean,
    DATE: _as_date, DATETIME: _as_datetime,
}
