"""Compiled objects: a declaration with its table resolved, ready to serve requests.

An `ObjectSpec` is built once per registry version; requests only read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import sqlalchemy as sa

from pb_headless.fields import ColumnDescription, FieldKind, describe_column
from pb_headless.operations import Operation, ScopeKind
from pb_headless.registry.defaults import ModelDefaults
from pb_headless.registry.source import Source


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    column: sa.Column[Any]
    description: ColumnDescription

    @property
    def kind(self) -> FieldKind:
        return self.description.kind

    @property
    def as_text(self) -> sa.ColumnElement[Any]:
        """The column as text, as a search or `like` reads it (cast unless it is plain text)."""
        return self.column if self.description.is_plain_text else sa.cast(self.column, sa.String())

    @classmethod
    def of(cls, column: sa.Column[Any]) -> FieldSpec:
        return cls(str(column.name), column, describe_column(column))


@dataclass(frozen=True, slots=True)
class Through:
    """The association table of a many-to-many relation (`relationship(..., secondary=...)`)."""

    table: sa.Table
    local: sa.Column[Any]  # points at the object's key (the relation's `local`)
    remote: sa.Column[Any]  # points at the related table's key (the relation's `remote`)


@dataclass(frozen=True, slots=True)
class RelationSpec:
    """A relation loadable with `with`: to-one renders an object or null, to-many an array.

    The related rows are narrowed as the object publishing the related table narrows its own
    (`published`, `query`); a to-many relation shows at most `limit` of them per record, in `order`.
    """

    name: str
    many: bool
    table: sa.Table
    local: sa.Column[Any]  # the column on the object's table
    remote: sa.Column[Any]  # the column on the related table it matches (through `through`, if any)
    fields: tuple[FieldSpec, ...]
    published: sa.Column[Any] | None  # the related table's `published` column, if it has one
    query: Callable[[sa.Select[Any]], sa.Select[Any]] | None = None  # the publishing object's `query`
    limit: int = 100  # the publishing object's `max_per_page`
    order: tuple[tuple[sa.Column[Any], bool], ...] = ()  # (column, descending), primary key last
    through: Through | None = None

    @property
    def key(self) -> sa.Column[Any]:
        """The column of the loaded rows that holds the object's `local` value."""
        return self.through.local if self.through is not None else self.remote


@dataclass(frozen=True, slots=True)
class PathSpec:
    """A filterable path one level through a relation (`author.name`, `tags.slug`): a field of the
    related records, which a list filters on as `filter[author.name]` (docs/query.md)."""

    name: str  # as written in `filterable` and in the query string
    relation: RelationSpec
    field: FieldSpec  # a column of `relation.table`


@dataclass(frozen=True, eq=False)
class ObjectSpec:
    """A published object, compiled: what every request, `/objects` and the OpenAPI document read."""

    name: str
    source: Source
    table: sa.Table
    pk: FieldSpec
    fields: Mapping[str, FieldSpec]  # published fields in declaration order, primary key first
    filterable: frozenset[str]
    searchable: tuple[str, ...]
    sortable: frozenset[str]
    relations: Mapping[str, RelationSpec]
    per_page: int
    max_per_page: int
    default_sort: tuple[tuple[str, bool], ...]
    query: Callable[[sa.Select[Any]], sa.Select[Any]] | None
    operations: frozenset[Operation]
    writable: tuple[str, ...]
    read_scope: str
    write_scope: str
    published: sa.Column[Any] | None  # the table's boolean `published` column, if it has one
    columns: Mapping[str, FieldSpec] = field(default_factory=dict)  # every column, published or not
    validator: Any = None  # pb_headless.rules.Validator for writes
    audit_columns: Mapping[str, sa.Column[Any]] = field(default_factory=dict)  # created_by / updated_by
    defaults: ModelDefaults = field(default_factory=ModelDefaults)  # the model's own, for writes
    search_index: str | None = None  # the FTS5 table giving search candidates (database/sqlite/trigrams.py)
    # The usable paths of `filterable`: the relation loads with `with` and its object publishes the field.
    paths: Mapping[str, PathSpec] = field(default_factory=dict)
    # What other layers compute once per spec (the planner's bound, the writes' plans), by name:
    # it lives and dies with the spec, a new one for each registry version (never copied by `replace`).
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @cached_property
    def published_condition(self) -> tuple[sa.ColumnElement[bool], ...]:
        """`published = true` where the table has the column: every read starts from it (the
        compiler's fixed part, made once per spec, so once per registry version)."""
        return () if self.published is None else (self.published == sa.true(),)

    @cached_property
    def search_texts(self) -> tuple[sa.ColumnElement[Any], ...]:
        """The searchable fields as text, in `searchable` order: what each search term is tried on."""
        return tuple(self.fields[name].as_text for name in self.searchable if name in self.fields)

    def scope_for(self, operation: Operation | str) -> str:
        if type(operation) is not Operation:  # an Operation is not looked up again (every request asks)
            operation = Operation(operation)
        return self.read_scope if operation.scope_kind is ScopeKind.READ else self.write_scope

    def describe(self) -> dict[str, Any]:
        """The object as `GET /objects` shows it (without links)."""
        return {
            "name": self.name,
            "operations": [str(operation) for operation in Operation if operation in self.operations],
            "fields": list(self.fields),
            "filterable": [*(name for name in self.fields if name in self.filterable), *self.paths],
            "sortable": [name for name in self.fields if name in self.sortable],
            "searchable": list(self.searchable),
            "with": list(self.relations),
        }


# The kind names this module used to define, until pb_headless.openapi reads `FieldKind` itself.
# Remove them then; new code imports `FieldKind` from `pb_headless.fields`.
INTEGER, NUMBER, DECIMAL, BOOLEAN, STRING, DATE, DATETIME, JSON = (
    FieldKind.INTEGER,
    FieldKind.FLOAT,
    FieldKind.DECIMAL,
    FieldKind.BOOLEAN,
    FieldKind.STRING,
    FieldKind.DATE,
    FieldKind.DATETIME,
    FieldKind.JSON,
)
