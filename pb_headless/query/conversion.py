"""Query-string text to the value a filter compares with, by the field's column (`pb_headless.fields`)."""

from __future__ import annotations

from decimal import ROUND_DOWN, Context, Decimal, localcontext
from typing import Any

from pb_headless.fields import ColumnDescription, ConversionError, FieldKind, from_query
from pb_headless.fields.text import InvalidValue, parse_flag
from pb_headless.fields.values import literal_text
from pb_headless.registry.spec import FieldSpec

__all__ = [
    "ConversionError",
    "as_flag",
    "convert",
    "literal_text",
]


def convert(field: FieldSpec, text: str) -> Any:
    """The value of `text` for `field`; raises ConversionError with the message a client reads."""
    value = from_query(field.description, text)
    if field.kind is FieldKind.DECIMAL:
        return _fit_decimal(value, field.description)
    return value


def as_flag(text: str) -> bool | None:
    """`true|1` → True, `false|0` → False (any case, trimmed), anything else → None."""
    try:
        return parse_flag(text.strip())
    except InvalidValue:
        return None


def _fit_decimal(value: Decimal, column: ColumnDescription) -> Decimal:
    """A value that compares with every storable value of a `NUMERIC(p, s)` column as `value` does,
    with no more digits than the column has.

    MariaDB truncates a literal of more than 65 digits, with a warning; the column's own values all lie
    strictly between -10^(p-s) and 10^(p-s), on multiples of 10^-s, so a value outside that range can
    become its edge, and one between two multiples can become the midpoint of the two.
    """
    precision, scale = column.precision, column.scale or 0
    if precision is None or not 0 <= scale <= precision:
        return value
    with localcontext(Context(prec=precision + 2)):
        edge = Decimal(10) ** (precision - scale)
        if value.copy_abs() >= edge:
            return edge.copy_sign(value)
        step = Decimal(10) ** -scale
        storable = value.quantize(step, rounding=ROUND_DOWN)
        return value if storable == value else storable + (step / 2).copy_sign(value)
