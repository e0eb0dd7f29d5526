"""JSON Schemas of one field's values: as a record shows them, and as a list filter accepts them.

Both follow the code that handles the value: `pb_headless.query.render` for what a record shows
(decimals as strings, datetimes with an offset) and `pb_headless.query.conversion` for what a query
value may be. A schema here is a promise in both directions: what it admits is accepted, and what
it refuses is answered with 422, so the two must move together.
"""

from __future__ import annotations

from pb_headless.fields.text import FLAG_FALSE_WORDS as FALSE_WORDS
from pb_headless.fields.text import FLAG_TRUE_WORDS as TRUE_WORDS
from pb_headless.fields.text import LARGEST_INTEGER, SMALLEST_INTEGER
from pb_headless.openapi.parts import Schema
from pb_headless.registry.spec import BOOLEAN, DATE, DATETIME, DECIMAL, INTEGER, JSON, NUMBER, FieldSpec

# The decimal notation `conversion` accepts in a query (no exponent), and the one `render` writes.
DECIMAL_QUERY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$"
DECIMAL_RECORD_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
# Query text may hold any character but NUL, which no database stores.
TEXT_PATTERN = "^[^\\u0000]*$"
LARGEST_FLOAT = 1.7976931348623157e308
FLAG_WORDS = sorted(TRUE_WORDS, reverse=True) + sorted(FALSE_WORDS, reverse=True)  # true 1 false 0

# One value of a comma list (`in`, `nin`, `between`) per kind, as `conversion` reads it. Where the
# server's reading is wider than a pattern can say exactly (integers past 18 digits, day 29 of a
# month), the pattern keeps to values it certainly accepts: whatever the schema admits is a 200.
_DAY = "[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
_LIST_ITEMS: dict[str, str] = {
    INTEGER: "[+-]?[0-9]{1,18}",
    NUMBER: "[+-]?([0-9]{1,100}(\\.[0-9]{0,100})?|\\.[0-9]{1,100})([eE][+-]?[0-9]{1,2})?",
    DECIMAL: "[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)",
    BOOLEAN: "(true|1|false|0)",
    DATE: _DAY,
    DATETIME: f"{_DAY}(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?(Z|[+-](0[0-9]|1[0-3]):[0-5][0-9])?)?",
}
_TEXT_ITEM = "[^,\\u0000]*"

_RECORD: dict[str, Schema] = {
    INTEGER: {"type": "integer"},
    NUMBER: {"type": "number"},
    DECIMAL: {
        "type": "string",
        "pattern": DECIMAL_RECORD_PATTERN,
        "description": 'A decimal number written as a string, e.g. "19.99".',
    },
    BOOLEAN: {"type": "boolean"},
    DATE: {"type": "string", "format": "date"},
    DATETIME: {"type": "string", "format": "date-time"},
}

_QUERY: dict[str, Schema] = {
    INTEGER: {"type": "integer", "minimum": SMALLEST_INTEGER, "maximum": LARGEST_INTEGER},
    NUMBER: {"type": "number", "minimum": -LARGEST_FLOAT, "maximum": LARGEST_FLOAT},
    DECIMAL: {
        "type": "string",
        "pattern": DECIMAL_QUERY_PATTERN,
        "description": "A decimal number without exponent, e.g. 19.99.",
    },
    BOOLEAN: {"type": "string", "enum": FLAG_WORDS},
    DATE: {"type": "string", "format": "date"},
    DATETIME: {
        "type": "string",
        "pattern": f"^{_LIST_ITEMS[DATETIME]}$",
        "description": "ISO 8601; without an offset the time is UTC; a date alone is midnight UTC.",
    },
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


def filter_value_schema(field: FieldSpec) -> Schema:
    """One filter value of `field` as the query string carries it."""
    known = _QUERY.get(field.kind)
    return dict(known) if known is not None else text_schema()


def text_schema() -> Schema:
    """Query text: any characters but NUL (a `like` word, a text field's value)."""
    return {"type": "string", "pattern": TEXT_PATTERN}


def query_list_schema(field: FieldSpec, *, least: int, most: int) -> Schema:
    """A comma-separated list of `least` to `most` values of `field`, as `in`, `nin` and `between` read it.

    A string, not an array: generated clients put an array of a query object into repeated keys,
    which the API reads as separate conditions.
    """
    item = _LIST_ITEMS.get(field.kind, _TEXT_ITEM)
    count = f"{{{least - 1}}}" if least == most else f"{{{least - 1},{most - 1}}}"
    return {"type": "string", "pattern": f"^{item}(,{item}){count}$"}


def flag_schema() -> Schema:
    """The value of `filter[f][null]`: true or 1 selects nulls, false or 0 the rest."""
    return {"type": "string", "enum": FLAG_WORDS}
