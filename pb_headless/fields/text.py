"""The text form of each kind of value: one grammar per kind, for query strings and JSON bodies alike.

Each parser takes the text exactly as given and raises `InvalidValue`; the entry points in
`pb_headless.fields.values` decide what is trimmed first and which message a client reads.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal

# Every supported database stores at most a signed 64-bit integer; a query value outside cannot match
# and would make the driver fail, so it is refused rather than passed on.
SMALLEST_INTEGER, LARGEST_INTEGER = -(2**63), 2**63 - 1

# The words of a boolean in a query string (`filter[featured]=1`, `filter[f][null]=false`), any case.
# Settings have their own, wider words (`pb_headless.settings.SETTING_ON_WORDS`: also yes/on).
FLAG_TRUE_WORDS, FLAG_FALSE_WORDS = frozenset({"true", "1"}), frozenset({"false", "0"})

INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,19}", re.ASCII)
# A decimal as people write one: a sign, `.5` and `1.` are numbers too; no exponent, because
# `1e999999` is a valid Decimal that no column holds, and in a price it is more likely a typo.
DECIMAL_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", re.ASCII)
FLOAT_TEXT = re.compile(DECIMAL_TEXT.pattern + r"(?:[eE][+-]?[0-9]{1,3})?", re.ASCII)
DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
TIME_TEXT = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])(?::([0-5][0-9])(?:\.([0-9]+))?)?", re.ASCII)
UUID_TEXT = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII | re.IGNORECASE
)
# ISO 8601's extended form (what RFC 3339 and OpenAPI's `date-time` mean), seconds and offset optional.
DATETIME_TEXT = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})"
    r"(?:[Tt ](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:[.,](?P<fraction>[0-9]+))?)?"
    r"(?P<offset>[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?",
    re.ASCII,
)


class InvalidValue(ValueError):
    """The value is not one of its kind; the caller words the message for its audience."""


def parse_integer(text: str) -> int:
    """`[+-]digits`, within 64 bits."""
    if INTEGER_TEXT.fullmatch(text):
        value = int(text)
        if SMALLEST_INTEGER <= value <= LARGEST_INTEGER:
            return value
    raise InvalidValue(text)


def parse_float(text: str) -> float:
    """A decimal, optionally with an exponent of at most three digits; never infinite."""
    if FLOAT_TEXT.fullmatch(text):
        value = float(text)
        if value not in (float("inf"), float("-inf")):
            return value
    raise InvalidValue(text)


def parse_decimal(text: str) -> Decimal:
    if DECIMAL_TEXT.fullmatch(text):
        return Decimal(text)
    raise InvalidValue(text)


def parse_flag(text: str) -> bool:
    """`true|1` → True, `false|0` → False, in any case."""
    word = text.lower()
    if word in FLAG_TRUE_WORDS:
        return True
    if word in FLAG_FALSE_WORDS:
        return False
    raise InvalidValue(text)


def parse_date(text: str) -> dt.date:
    if DATE_TEXT.fullmatch(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            pass
    raise InvalidValue(text)


def parse_time(text: str) -> dt.time:
    match = TIME_TEXT.fullmatch(text)
    if match is None:
        raise InvalidValue(text)
    hour, minute, second, fraction = match.groups()
    return dt.time(int(hour), int(minute), int(second or 0), _microseconds(fraction))


def parse_datetime(text: str) -> dt.datetime:
    """An aware UTC datetime: without an offset the time is UTC, a date alone is midnight UTC."""
    match = DATETIME_TEXT.fullmatch(text)
    if match is None:
        raise InvalidValue(text)
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
        # Always UTC: SQLite's DATETIME drops the offset, which would shift the instant.
        return moment.astimezone(dt.UTC)
    except (ValueError, OverflowError):  # 2024-02-30, 25:00, +24:00, or a UTC moment before year 1
        raise InvalidValue(text) from None


def parse_uuid(text: str) -> uuid.UUID:
    """The canonical 8-4-4-4-12 form only (any case): what OpenAPI's `format: uuid` promises."""
    if UUID_TEXT.fullmatch(text):
        return uuid.UUID(text)
    raise InvalidValue(text)


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
