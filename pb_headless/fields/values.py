"""Values of a column from the two places a client sends them: query-string text and JSON bodies.

Both entry points read the same grammars (`pb_headless.fields.text`). They differ on purpose where
the carrier differs, and each difference is commented where it is made:

- a query string has only text, so a boolean is also `1`/`0` there, and a number is text to parse;
  a JSON body has real types, so a boolean is only `true`/`false` and an integer field refuses `true`
  (and the string "3") — the type gates of `pb_headless.rules` refuse those before conversion;
- query text is trimmed before parsing (an unencoded `+` arrives as a space), JSON strings are not;
- a query datetime may carry `+02:00` as ` 02:00`, the same unencoded `+`;
- a query value keeps the UTC offset even for a column without a timezone (the compiler drops it when
  binding); a JSON value for such a column is stored naive, in UTC.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pb_headless.fields.kinds import ColumnDescription, FieldKind
from pb_headless.fields.text import (
    InvalidValue,
    parse_date,
    parse_datetime,
    parse_decimal,
    parse_flag,
    parse_float,
    parse_integer,
    parse_time,
    parse_uuid,
)

# The JSON type of a value, with numbers split as JSON Schema does: 3 and 3.0 are integers, 3.5 is not.
STRING, INTEGER, FRACTION = "string", "integer", "fraction"
BOOLEAN, ARRAY, OBJECT = "boolean", "array", "object"
NUMBER = frozenset({INTEGER, FRACTION})
ANY_JSON = frozenset({STRING, INTEGER, FRACTION, BOOLEAN, ARRAY, OBJECT})

_JSON_TYPES: dict[FieldKind, frozenset[str]] = {
    FieldKind.INTEGER: frozenset({INTEGER}),
    FieldKind.FLOAT: NUMBER,
    FieldKind.DECIMAL: NUMBER | {STRING},  # "19.99" keeps every digit a JSON number might lose
    FieldKind.BOOLEAN: frozenset({BOOLEAN}),
    **dict.fromkeys(
        (FieldKind.STRING, FieldKind.DATE, FieldKind.DATETIME, FieldKind.TIME, FieldKind.UUID),
        frozenset({STRING}),
    ),
    FieldKind.JSON: ANY_JSON,
    FieldKind.OTHER: ANY_JSON,
}

# The query-string messages (docs/query.md, "Errors"); JSON bodies word theirs in pb_headless.rules.
_QUERY_MESSAGES = {
    FieldKind.INTEGER: "must be an integer",
    FieldKind.FLOAT: "must be a number",
    FieldKind.DECIMAL: "must be a number",
    FieldKind.BOOLEAN: "must be true, false, 1 or 0",
    FieldKind.DATE: "must be a date (YYYY-MM-DD)",
    FieldKind.DATETIME: "must be a date-time (ISO 8601, e.g. 2024-05-01T12:00:00+00:00)",
    FieldKind.UUID: "must be a UUID",
}
# An unencoded `+` in a query string arrives as a space: `...T10:00:00 02:00` meant `+02:00`.
_OFFSET_PLUS_AS_SPACE = re.compile(r"(.+[Tt ][0-9:.,]+) ([0-9]{2}:?[0-9]{2})", re.ASCII)


class ConversionError(InvalidValue):
    """A query value that does not convert; the message is the one shown in 422 `details`."""


# -- query-string text ----------------------------------------------------------------------------------


def from_query(description: ColumnDescription, text: str) -> Any:
    """The value of query text for a column of this description (a datetime is aware, in UTC)."""
    kind = description.kind
    if kind.is_textual or kind is FieldKind.JSON:
        return _query_text(description, text)
    parse = _QUERY_PARSERS[kind]
    try:
        return parse(text.strip())
    except InvalidValue:
        raise ConversionError(_QUERY_MESSAGES[kind]) from None


def literal_text(text: str) -> str:
    """Text for `like`, `search` and text fields, taken as written."""
    # PostgreSQL refuses NUL in text; no stored text can contain it, so say so instead of failing.
    if "\x00" in text:
        raise ConversionError("must not contain NUL characters")
    return text


def _query_text(description: ColumnDescription, text: str) -> Any:
    literal_text(text)
    if description.kind is FieldKind.UUID:
        try:
            value = parse_uuid(text.strip())
        except InvalidValue:
            raise ConversionError(_QUERY_MESSAGES[FieldKind.UUID]) from None
        return value if description.as_uuid else str(value)
    if description.choices and text not in description.choices:
        # A native enum refuses other labels with a database error; name the ones it takes.
        raise ConversionError(f"must be one of: {', '.join(description.choices)}")
    return text  # time and other types compare as text


def _query_datetime(text: str) -> Any:
    plus_as_space = _OFFSET_PLUS_AS_SPACE.fullmatch(text)
    return parse_datetime(f"{plus_as_space[1]}+{plus_as_space[2]}" if plus_as_space else text)


_QUERY_PARSERS: dict[FieldKind, Callable[[str], Any]] = {
    # A query string has only text: a boolean is also `1` or `0` there.
    FieldKind.INTEGER: parse_integer,
    FieldKind.FLOAT: parse_float,
    FieldKind.DECIMAL: parse_decimal,
    FieldKind.BOOLEAN: parse_flag,
    FieldKind.DATE: parse_date,
    FieldKind.DATETIME: _query_datetime,
}


# -- JSON body values -----------------------------------------------------------------------------------


def json_type(value: object) -> str | None:
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


def json_types(description: ColumnDescription) -> frozenset[str]:
    """The JSON types a value for this column may have: an integer field takes no `true`, no "3"."""
    return _JSON_TYPES[description.kind]


def json_converter(description: ColumnDescription) -> Callable[[object], object]:
    """The conversion of a JSON value whose type `json_types` admits; raises InvalidValue.

    JSON strings are taken exactly: nothing is trimmed, since a body carries the text it means.
    """
    kind = description.kind
    if kind is FieldKind.DATETIME:
        aware = description.timezone
        # A column without a timezone stores naive UTC.
        return lambda value: _json_datetime(value, aware=aware)
    if kind is FieldKind.UUID:
        as_uuid = description.as_uuid
        return lambda value: parse_uuid(_text(value)) if as_uuid else str(parse_uuid(_text(value)))
    return _JSON_CONVERTERS.get(kind, _as_is)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidValue(value)
    return value


def _as_is(value: object) -> object:
    return value


def _json_integer(value: object) -> int:
    return int(value)  # type: ignore[call-overload]  # an int, or a float or Decimal with no fraction


def _json_float(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]  # the type gate let only numbers through
    except OverflowError:
        raise InvalidValue(value) from None
    if not math.isfinite(number):
        raise InvalidValue(value)
    return number


def _json_decimal(value: object) -> Decimal:
    if isinstance(value, str):
        return parse_decimal(value)
    if isinstance(value, float):
        # repr() is the shortest text that reads back as the same float, so 19.99 stays Decimal('19.99').
        if not math.isfinite(value):
            raise InvalidValue(value)
        return Decimal(repr(value))
    if isinstance(value, Decimal) and not value.is_finite():
        raise InvalidValue(value)
    return Decimal(value)  # type: ignore[arg-type]  # an int or a finite Decimal


def _json_datetime(value: object, *, aware: bool) -> object:
    moment = parse_datetime(_text(value))
    return moment if aware else moment.replace(tzinfo=None)


_JSON_CONVERTERS: dict[FieldKind, Callable[[object], object]] = {
    FieldKind.INTEGER: _json_integer,
    FieldKind.FLOAT: _json_float,
    FieldKind.DECIMAL: _json_decimal,
    FieldKind.DATE: lambda value: parse_date(_text(value)),
    FieldKind.TIME: lambda value: parse_time(_text(value)),
}
