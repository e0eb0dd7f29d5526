"""What a column stores, described once: its `FieldKind` and the facts every stage reads.

The registry, the query planner and compiler, the write rules and the OpenAPI document all ask the
same `ColumnDescription`; none of them looks at a SQLAlchemy type on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.sql import sqltypes


class FieldKind(StrEnum):
    """The kind of value a column holds. A `StrEnum`: `FieldKind.DATE == "date"` holds."""

    STRING = "string"  # text, and enums (whose labels are in `choices`)
    INTEGER = "integer"
    FLOAT = "float"
    DECIMAL = "decimal"  # NUMERIC(p, s): exact; JSON shows it as a string
    BOOLEAN = "boolean"
    DATE = "date"
    DATETIME = "datetime"
    TIME = "time"
    UUID = "uuid"
    JSON = "json"
    OTHER = "other"  # binary, interval, arrays, unknown reflected types: read as text, never written

    @property
    def is_textual(self) -> bool:
        """Whether a query reads it as text: `like` applies, and `search` casts it to text."""
        return self in _TEXTUAL

    @property
    def is_comparable(self) -> bool:
        """Whether a query may filter or sort on it; JSON compares alike on no two databases."""
        return self is not FieldKind.JSON


_TEXTUAL = frozenset({FieldKind.STRING, FieldKind.UUID, FieldKind.TIME, FieldKind.OTHER})

# Portable ranges: SQLite would take 64 bits in any INTEGER, but PostgreSQL and MySQL would not.
_INTEGER_RANGES = ((sa.BigInteger, 63), (sa.SmallInteger, 15), (sa.Integer, 31))
_SIMPLE: dict[Any, FieldKind] = {
    sqltypes.Date: FieldKind.DATE,
    sqltypes.Time: FieldKind.TIME,
    sqltypes.JSON: FieldKind.JSON,
}


@dataclass(frozen=True, slots=True)
class ColumnDescription:
    """One column, as far as reading, filtering, writing and documenting its values is concerned."""

    kind: FieldKind
    nullable: bool = True
    has_default: bool = False  # the database (or SQLAlchemy) fills it when a create leaves it out
    max_length: int | None = None
    int_range: tuple[int, int] | None = None
    precision: int | None = None
    scale: int | None = None
    choices: tuple[str, ...] | None = None  # an enum's labels
    timezone: bool = False  # a datetime column that stores the offset
    as_uuid: bool = False  # a UUID column whose Python value is `uuid.UUID` (else its text)

    @property
    def is_plain_text(self) -> bool:
        """Text a query can compare and `like` as it is, without a cast (not an enum)."""
        return self.kind is FieldKind.STRING and self.choices is None

    @property
    def largest_decimal(self) -> Decimal | None:
        """The largest value NUMERIC(p, s) holds: p - s nines, the point, s nines."""
        if self.precision is None:
            return None
        whole, scale = self.precision - (self.scale or 0), self.scale or 0
        # Spelled out rather than computed: the default context would round 40 nines.
        return Decimal(("9" * whole or "0") + ("." + "9" * scale if scale else ""))


def describe_column(column: sa.Column[Any]) -> ColumnDescription:
    """The description of `column`, worked out from the column alone. Made once per field and
    registry version: the registry keeps it in the field's `FieldSpec.description`, which every
    request reads (nothing of a request describes a column again)."""
    return ColumnDescription(
        **_type_facts(stored_type(column.type)),
        nullable=bool(column.nullable),
        has_default=_has_default(column),
    )


def stored_type(type_: sa.types.TypeEngine[Any]) -> sa.types.TypeEngine[Any]:
    """What a TypeDecorator stores. Interval is one too, over DateTime, but its Python value is a
    timedelta, which neither a query value nor a JSON value converts to."""
    while isinstance(type_, sa.types.TypeDecorator) and not isinstance(type_, sa.Interval):
        type_ = type_.impl_instance
    return type_


def _type_facts(type_: sa.types.TypeEngine[Any]) -> dict[str, Any]:
    if isinstance(type_, sa.Boolean) or _is_mariadb_boolean(type_):
        return {"kind": FieldKind.BOOLEAN}
    if isinstance(type_, sa.Enum):
        return {"kind": FieldKind.STRING, "choices": tuple(type_.enums)}
    if isinstance(type_, sa.Uuid):
        return {"kind": FieldKind.UUID, "as_uuid": bool(type_.as_uuid)}
    if isinstance(type_, sa.String):
        return {"kind": FieldKind.STRING, "max_length": type_.length}
    for integer_type, bits in _INTEGER_RANGES:
        if isinstance(type_, integer_type):
            return {"kind": FieldKind.INTEGER, "int_range": (-(2**bits), 2**bits - 1)}
    if isinstance(type_, sa.Float):
        return {"kind": FieldKind.FLOAT}
    if isinstance(type_, sa.Numeric):
        # NUMERIC(p) means NUMERIC(p, 0) in SQL.
        scale = type_.scale if type_.scale is not None or type_.precision is None else 0
        return {"kind": FieldKind.DECIMAL, "precision": type_.precision, "scale": scale}
    if isinstance(type_, sa.DateTime):
        return {"kind": FieldKind.DATETIME, "timezone": bool(type_.timezone)}
    # The first generic type it is one of (each dialect's DATE, JSONB… subclass these), else OTHER.
    kind = next((kind for generic, kind in _SIMPLE.items() if isinstance(type_, generic)), FieldKind.OTHER)
    return {"kind": kind}


def _is_mariadb_boolean(type_: sa.types.TypeEngine[Any]) -> bool:
    """MariaDB's BOOLEAN is TINYINT(1), and reflects as such; treat it as what it was declared."""
    return isinstance(type_, mysql.TINYINT) and getattr(type_, "display_width", None) == 1


def _has_default(column: sa.Column[Any]) -> bool:
    if column.default is not None or column.server_default is not None or column.computed is not None:
        return True
    if column.identity is not None:
        return True
    return column.primary_key and _is_autoincrement(column)


def _is_autoincrement(column: sa.Column[Any]) -> bool:
    table = getattr(column, "table", None)
    if isinstance(table, sa.Table):
        return table.autoincrement_column is column
    # A column not yet on a table: SQLAlchemy's own default for a lone integer primary key.
    return column.autoincrement is not False and isinstance(stored_type(column.type), sa.Integer)
