"""Reads a SQLAlchemy column into the `ColumnKind` that decides its implicit checks."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.sql import sqltypes

# JSON value types, with numbers split the way JSON Schema does: 3 and 3.0 are integers, 3.5 is not.
STRING, INTEGER, FRACTION = "string", "integer", "fraction"
BOOLEAN, ARRAY, OBJECT = "boolean", "array", "object"
NUMBER = frozenset({INTEGER, FRACTION})
ANY_JSON = frozenset({STRING, INTEGER, FRACTION, BOOLEAN, ARRAY, OBJECT})

_ATOMS = {
    "integer": frozenset({INTEGER}),
    "float": NUMBER,
    "decimal": NUMBER | {STRING},
    "boolean": frozenset({BOOLEAN}),
    "string": frozenset({STRING}),
    "date": frozenset({STRING}),
    "datetime": frozenset({STRING}),
    "time": frozenset({STRING}),
    "uuid": frozenset({STRING}),
    "json": ANY_JSON,
    "unsupported": ANY_JSON,
}

# Portable ranges: SQLite would take 64 bits in any INTEGER, but PostgreSQL and MySQL would not.
_INTEGER_RANGES = (
    (sa.BigInteger, 63),
    (sa.SmallInteger, 15),
    (sa.Integer, 31),
)


@dataclass(frozen=True)
class ColumnKind:
    """What a column stores, as far as validating a JSON value for it is concerned."""

    name: str
    nullable: bool = True
    has_default: bool = False
    max_length: int | None = None
    int_range: tuple[int, int] | None = None
    precision: int | None = None
    scale: int | None = None
    choices: tuple[str, ...] | None = None
    timezone: bool = False
    as_uuid: bool = False

    @property
    def atoms(self) -> frozenset[str]:
        """The JSON types a value for this column may have."""
        return _ATOMS[self.name]

    @property
    def largest_decimal(self) -> Decimal | None:
        """The largest value NUMERIC(p, s) holds: p - s nines, the point, s nines."""
        if self.precision is None:
            return None
        whole, scale = self.precision - (self.scale or 0), self.scale or 0
        # Spelled out rather than computed: the default context would round 40 nines.
        return Decimal(("9" * whole or "0") + ("." + "9" * scale if scale else ""))


def describe_column(column: sa.Column) -> ColumnKind:
    kind = _kind_of_type(_unwrap(column.type))
    return ColumnKind(
        **kind,
        nullable=bool(column.nullable),
        has_default=_has_default(column),
    )


def _unwrap(type_: sa.types.TypeEngine) -> sa.types.TypeEngine:
    # A TypeDecorator stores what its impl stores; validate against that. Interval is one too, over
    # DateTime, but its Python value is a timedelta, which no JSON value converts to here.
    while isinstance(type_, sa.types.TypeDecorator) and not isinstance(type_, sa.Interval):
        type_ = type_.impl_instance
    return type_


def _kind_of_type(type_: sa.types.TypeEngine) -> dict:
    if isinstance(type_, sa.Boolean) or _is_mariadb_boolean(type_):
        return {"name": "boolean"}
    if isinstance(type_, sa.Enum):
        return {"name": "string", "choices": tuple(type_.enums)}
    if isinstance(type_, sa.Uuid):
        return {"name": "uuid", "as_uuid": bool(type_.as_uuid)}
    if isinstance(type_, sa.String):
        return {"name": "string", "max_length": type_.length}
    for integer_type, bits in _INTEGER_RANGES:
        if isinstance(type_, integer_type):
            return {"name": "integer", "int_range": (-(2**bits), 2**bits - 1)}
    if isinstance(type_, sa.Float):
        return {"name": "float"}
    if isinstance(type_, sa.Numeric):
        # NUMERIC(p) means NUMERIC(p, 0) in SQL.
        scale = type_.scale if type_.scale is not None or type_.precision is None else 0
        return {"name": "decimal", "precision": type_.precision, "scale": scale}
    if isinstance(type_, sa.DateTime):
        return {"name": "datetime", "timezone": bool(type_.timezone)}
    return {"name": _SIMPLE.get(type_._type_affinity, "unsupported")}


def _is_mariadb_boolean(type_: sa.types.TypeEngine) -> bool:
    """MariaDB's BOOLEAN is TINYINT(1), and reflects as such; treat it as what it was declared."""
    return isinstance(type_, mysql.TINYINT) and getattr(type_, "display_width", None) == 1


_SIMPLE = {sqltypes.Date: "date", sqltypes.Time: "time", sqltypes.JSON: "json"}


def _has_default(column: sa.Column) -> bool:
    """Whether the database (or SQLAlchemy) fills the column when a create leaves it out."""
    if column.default is not None or column.server_default is not None or column.computed is not None:
        return True
    if column.identity is not None:
        return True
    return column.primary_key and _is_autoincrement(column)


def _is_autoincrement(column: sa.Column) -> bool:
    table = getattr(column, "table", None)
    if isinstance(table, sa.Table):
        return table.autoincrement_column is column
    # A column not yet on a table: SQLAlchemy's own default for a lone integer primary key.
    return column.autoincrement is not False and isinstance(_unwrap(column.type), sa.Integer)
