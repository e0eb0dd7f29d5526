"""JSON Schemas of one field's values: as a record shows them, and as a list filter accepts them.

Both follow the code that handles the value: `pb_headless.query.render` for what a record shows
(decimals as strings, datetimes with an offset) and `pb_headless.query.conversion` for what a query
value may be. A schema here is a promise in both directions: what it admits is accepted, and what
it refuses is answered with 422, so the two must move together.
"""

from __future__ import annotations

from pb_headless.openapi.parts import Schema
from pb_headless.query.conversion import FALSE_WORDS, LARGEST_INTEGER, SMALLEST_INTEGER, TRUE_WORDS
from pb_headless.registry.spec import BOOLEAN, DATE, DATETIME, DECIMAL, INTEGER, JSON, NUMBER, FieldSpec

# The decimal notation `conversion` accepts in a query (no exponent), and the one `render` writes.
DECIMAL_QUERY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$"
DECIMAL_RECORD_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
# Query text may hold any character but NUL, which no database stores; list values also no comma.
TEXT_PATTERN = "^[^\\u0000]*$"
LIST_ITEM_PATTERN = "^[^,\\u0000]*$"
LARGEST_FLOAT = 1.7976931348623157e308
FLAG_WORDS = sorted(TRUE_WORDS, reverse=True) + sorted(FALSE_WORDS, reverse=True)  # true 1 false 0

_RECORD: dict[str, Schema] = {
    INTEGER: {"type": "integer"},
    NUMBER: {"type": "number"},
    DECIMAL: {"type": "string", "pattern": DECIMAL_RECORD_PATTERN,
              "description": "A decimal number written as a string, e.g. \"19.99\"."},
    BOOLEAN: {"type": "boolean"},
    DATE: {"type": "string", "format": "date"},
    DATETIME: {"type": "string", "format": "date-time"},
}

_QUERY: dict[str, Schema] = {
    INTEGER: {"type": "integer", "minimum": SMALLEST_INTEGER, "maximum": LARGEST_INTEGER},
    NUMBER: {"type": "number", "minimum": -LARGEST_FLOAT, "maximum": LARGEST_FLOAT},
    DECIMAL: {"type": "string", "pattern": DECIMAL_QUERY_PATTERN,
              "description": "A decimal number without exponent, e.g. 19.99."},
    BOOLEAN: {"type": "string", "enum": FLAG_WORDS},
    DATE: {"type": "string", "format": "date"},
    DATETIME: {"type": "string", "anyOf": [{"format": "date-time"}, {"format": "date"}],
               "description": "ISO 8601; without an offset the time is UTC; a date alone is midnight UTC."},
}


def record_value_schema(field: FieldSpec) -> Schema:
    """A record's value of `field`, null included when the column is nullable."""
    if field.kind == JSON:
        return {}  # any JSON value, null included
    schema = dict(_RECORD.get(field.kind, {"type": "string"}))
    if field.column.nullable and not field.column.primary_key:
        schema["type"] = [schema["type"], "null"]
    label = field.column.info.get("label") if field.column.info else None
    if isinstance(label, str) and label.strip():
        schema = {"title": label.strip(), **schema}  # a constructor field's label, as the site owner wrote it
    return schema


def query_value_schema(field: FieldSpec, *, in_list: bool = False) -> Schema:
    """One filter value of `field` as the query string carries it; `in_list`: an item of a comma list."""
    known = _QUERY.get(field.kind)
    if known is not None:
        return dict(known)
    return {"type": "string", "pattern": LIST_ITEM_PATTERN if in_list else TEXT_PATTERN}


def flag_schema() -> Schema:
    """The value of `filter[f][null]`: true or 1 selects nulls, false or 0 the rest."""
    return {"type": "string", "enum": FLAG_WORDS}
