"""Field kinds and values: what a column stores, and how text or JSON becomes a value for it.

Pure: no HTTP and no database. `describe_column` reads a SQLAlchemy column once into a
`ColumnDescription` (its `FieldKind`, length, precision and scale, choices...); `from_query` and
`json_converter` are the two ways a client's value becomes a Python value for that column.
"""

from pb_headless.fields.kinds import ColumnDescription, FieldKind, describe_column
from pb_headless.fields.text import InvalidValue
from pb_headless.fields.values import ConversionError, from_query, json_converter, json_type, json_types

__all__ = [
    "ColumnDescription",
    "ConversionError",
    "FieldKind",
    "InvalidValue",
    "describe_column",
    "from_query",
    "json_converter",
    "json_type",
    "json_types",
]
