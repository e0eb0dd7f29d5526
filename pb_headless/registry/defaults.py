"""A model's own defaults, applied to API writes as SQLAlchemy applies them.

Writes run on the host's `databases` connection, which executes a compiled statement without
SQLAlchemy's execution context: a column's `default=` or `onupdate=` would be sent as NULL (or not
at all). `ModelDefaults` fills them in before the statement is built, the way a SQLAlchemy
`Connection.execute` would: scalars as they are, Python callables called once per write (with a
context offering `get_current_parameters()`), SQL expressions (`func.now()`) left for the database to
evaluate. `server_default` and `server_onupdate` are the database's own; the record read back after
the write shows what they produced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

Default = Any  # a SQLAlchemy ColumnDefault (scalar, callable or SQL expression)


@dataclass(frozen=True, slots=True)
class ModelDefaults:
    """Per column name, the `default=` used by creates and the `onupdate=` used by updates."""

    on_insert: tuple[tuple[sa.Column[Any], Default], ...] = ()
    on_update: tuple[tuple[sa.Column[Any], Default], ...] = ()

    @classmethod
    def of(cls, table: sa.Table) -> ModelDefaults:
        """Computed once per registry version. A `Sequence` is left to the database, which fills an
        autoincrementing key by itself."""

        def usable(default: Any) -> bool:
            return default is not None and not default.is_sequence

        return cls(
            on_insert=tuple((c, c.default) for c in table.columns if usable(c.default)),
            on_update=tuple((c, c.onupdate) for c in table.columns if usable(c.onupdate)),
        )

    def for_insert(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values` with the `default=` of every column they leave out."""
        return _filled(values, self.on_insert)

    def for_update(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values` with the `onupdate=` of every column they leave out (an empty update stays empty:
        it changes nothing, so nothing is stamped)."""
        return _filled(values, self.on_update) if values else dict(values)


def _filled(
    values: Mapping[str, Any], defaults: tuple[tuple[sa.Column[Any], Default], ...]
) -> dict[str, Any]:
    filled = dict(values)
    for column, default in defaults:
        if column.name in filled:
            continue
        if default.is_callable:
            # SQLAlchemy wraps a callable taking no argument into one taking the context.
            filled[column.name] = default.arg(_Context(filled, column))
        else:
            filled[column.name] = default.arg  # a scalar, or a SQL expression run by the database
    return filled


class _Context:
    """The part of SQLAlchemy's execution context that a context-sensitive default reads."""

    def __init__(self, values: Mapping[str, Any], column: sa.Column[Any]) -> None:
        self.current_parameters = dict(values)
        self.current_column = column

    def get_current_parameters(self, isolate_multiinsert_groups: bool = True) -> dict[str, Any]:
        return self.current_parameters
