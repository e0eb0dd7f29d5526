"""The field types a constructor table offers: the SQL column each one makes and the rules it implies.

| type       | column                         | rules on write                |
|------------|--------------------------------|-------------------------------|
| `string`   | VARCHAR(length, default 255)   | `string\\|max:<length>`        |
| `text`     | TEXT (MEDIUMTEXT on MariaDB)   | `string` (+ `max:<length>`)   |
| `integer`  | INTEGER                        | `integer`                     |
| `number`   | DOUBLE                         | `numeric`                     |
| `decimal`  | NUMERIC(15, 2)                 | `numeric`                     |
| `boolean`  | BOOLEAN                        | `boolean`                     |
| `date`     | DATE                           | `date`                        |
| `datetime` | DATETIME (naive UTC)           | `date`                        |
| `email`    | VARCHAR(length, default 255)   | `string\\|email\\|max:<length>` |
| `url`      | VARCHAR(length, default 2048)  | `string\\|url\\|max:<length>`   |

A required field adds `required` in front and makes the column NOT NULL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

MAX_VARCHAR = 4000  # longer values belong in a `text` field; MariaDB caps a row's VARCHARs at 64 KiB


@dataclass(frozen=True, slots=True)
class FieldKind:
    """One field type: its column type (given the length), its type rules and its default length."""

    name: str
    column_type: Callable[[int | None], sa.types.TypeEngine]
    rules: tuple[str, ...]
    default_length: int | None = None  # set for VARCHAR types, which always have a length
    takes_length: bool = False

    def length_of(self, length: int | None) -> int | None:
        """The effective maximum length: the given one, else the column's own."""
        return length if length is not None else self.default_length


def _text(_: int | None) -> sa.types.TypeEngine:
    # MariaDB's TEXT holds 64 KiB; MEDIUMTEXT is what PostgreSQL's and SQLite's TEXT hold in practice.
    return sa.Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


def _varchar(length: int | None) -> sa.types.TypeEngine:
    return sa.String(length)


KINDS: dict[str, FieldKind] = {
    kind.name: kind
    for kind in (
        FieldKind("string", _varchar, ("string",), default_length=255, takes_length=True),
        FieldKind("text", _text, ("string",), takes_length=True),
        FieldKind("integer", lambda _: sa.Integer(), ("integer",)),
        FieldKind("number", lambda _: sa.Double(), ("numeric",)),
        FieldKind("decimal", lambda _: sa.Numeric(15, 2), ("numeric",)),
        FieldKind("boolean", lambda _: sa.Boolean(), ("boolean",)),
        FieldKind("date", lambda _: sa.Date(), ("date",)),
        FieldKind("datetime", lambda _: sa.DateTime(), ("date",)),
        FieldKind("email", _varchar, ("string", "email"), default_length=255, takes_length=True),
        FieldKind("url", _varchar, ("string", "url"), default_length=2048, takes_length=True),
    )
}
FIELD_TYPES = tuple(KINDS)
