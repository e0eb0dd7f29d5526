"""Rows of a constructor table as the record editor reads and writes them: form text to typed values."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from pb_headless.constructor import ConstructorField, ConstructorTable

MAX_ID = 2**31 - 1
MAX_DECIMAL = Decimal(10) ** 13


def row_id(text: str) -> int | None:
    """A row id from a URL: ASCII digits within INTEGER's range, else None (a 404, never a driver error)."""
    if not text.isascii() or not text.isdigit() or len(text) > 10 or int(text) > MAX_ID:
        return None
    return int(text)


def _as_datetime(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value  # stored as naive UTC


def _as_integer(text: str) -> int:
    value = int(text)
    if not -MAX_ID - 1 <= value <= MAX_ID:  # INTEGER is 32 bits on PostgreSQL and MariaDB
        raise ValueError(text)
    return value


def _as_number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _as_decimal(text: str) -> Decimal:
    value = Decimal(text)
    if not value.is_finite() or abs(value) >= MAX_DECIMAL:  # NUMERIC(15, 2)
        raise ValueError(text)
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


# What the record editor says under a field whose value it cannot take: a full sentence, for people.
CONVERTERS: Mapping[str, tuple[Callable[[str], Any], str]] = {
    "integer": (_as_integer, "Enter a whole number, such as 42 (up to about 2 billion either way)."),
    "number": (_as_number, "Enter a number, such as 3.5."),
    "decimal": (_as_decimal, "Enter an amount such as 19.99, below 10 trillion."),
    "date": (date.fromisoformat, "Enter a date, such as 2026-01-31."),
    "datetime": (_as_datetime, "Enter a date and a time, such as 2026-01-31 14:30."),
}
REQUIRED = "Fill this in: it is required."
INPUT_TYPES = {
    "string": "text",
    "email": "email",
    "url": "url",
    "integer": "number",
    "number": "number",
    "decimal": "number",
    "date": "date",
    "datetime": "datetime-local",
}


def value_of(field: ConstructorField, raw: str) -> Any:
    """The typed value of one field's form text; ValueError carries the message to show."""
    if field.type == "boolean":
        return bool(raw)
    text = raw.strip()
    if not text:
        if field.required:
            raise ValueError(REQUIRED)
        return None
    if field.type in CONVERTERS:
        convert, problem = CONVERTERS[field.type]
        try:
            return convert(text)
        except (ValueError, ArithmeticError, InvalidOperation):
            raise ValueError(problem) from None
    if field.max_length is not None and len(text) > field.max_length:
        raise ValueError(f"Shorten this to {field.max_length} characters at most (it has {len(text)}).")
    if field.type == "email" and "@" not in text:
        raise ValueError("Enter an email address, such as name@example.com.")
    if field.type == "url" and not text.startswith(("http://", "https://")):
        raise ValueError("Enter a web address starting with http:// or https://.")
    return raw if field.type == "text" else text


def values_from_form(
    table: ConstructorTable, form: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The row to write and a message per field that failed; nothing is written when any failed."""
    values: dict[str, Any] = {"published": bool(form.get("published"))}
    errors: dict[str, str] = {}
    for field in table.fields:
        raw = form.get(field.name)
        try:
            values[field.name] = value_of(field, raw if isinstance(raw, str) else "")
        except ValueError as problem:
            errors[field.name] = str(problem)
    return values, errors


def display_text(field: ConstructorField, value: Any) -> str:
    """A stored value as the records list shows it: Yes/No for a boolean, a dash for nothing."""
    if field.type == "boolean":
        return "Yes" if value else "No"
    if value is None or value == "":
        return "—"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def form_text(field: ConstructorField, value: Any) -> str:
    """A stored value as the form shows it."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M")
    return str(value)
