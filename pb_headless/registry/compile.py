"""Turns checked declarations with resolved tables into frozen `ObjectSpec`s, relations included.

Two steps, so that no spec is changed after it is built: every object's `Publication` first (its
table, columns and published fields: what the relations of other objects need to know of it), then
each object's relations resolved against all publications, then its `ObjectSpec`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pb_headless.fields import FieldKind, describe_column
from pb_headless.registry.declaration import PUBLISHED_COLUMN, Declaration, DeclarationError, checked_against
from pb_headless.registry.defaults import ModelDefaults
from pb_headless.registry.paths import resolve_paths, warn_unindexed
from pb_headless.registry.relations import resolve_relations
from pb_headless.registry.spec import FieldSpec, ObjectSpec
from pb_headless.rules import Validator

AUDIT_COLUMNS = ("created_by", "updated_by")

Skip = Callable[[Declaration, DeclarationError], None]


def compile_objects(
    declarations: Mapping[str, Declaration],
    tables: Mapping[str, sa.Table],
    known: Mapping[str, sa.Table],
    skip: Skip | None = None,
) -> dict[str, ObjectSpec]:
    """The served objects, by name. `tables` gives each declaration's table, `known` every table a
    relation may lead to. A declaration that cannot be served raises its DeclarationError, unless
    `skip` takes it (to log it and leave the object out)."""

    def failed(declaration: Declaration, error: DeclarationError) -> None:
        if skip is None:
            raise error
        skip(declaration, error)

    publications: dict[str, Publication] = {}
    for name, declaration in declarations.items():
        try:
            publications[name] = publication_of(declaration, _table_of(declaration, tables))
        except DeclarationError as error:
            failed(declaration, error)
    specs: dict[str, ObjectSpec] = {}
    for name, publication in publications.items():
        try:
            specs[name] = compile_object(publication, publications, known)
        except DeclarationError as error:
            failed(publication.declaration, error)
    return specs


@dataclass(frozen=True)
class Publication:
    """An object's declaration checked against its table, before its relations are resolved."""

    declaration: Declaration
    table: sa.Table
    columns: Mapping[str, FieldSpec]  # every column, published or not
    pk: FieldSpec
    fields: Mapping[str, FieldSpec]  # published fields in declaration order, primary key first
    published: sa.Column[Any] | None  # the table's boolean `published` column, if it has one
    validator: Validator


def publication_of(declaration: Declaration, table: sa.Table) -> Publication:
    """A model's declaration was checked when it was registered; a reflected `table` is checked now."""
    if declaration.validator is None:
        declaration = checked_against(declaration, table)
    assert declaration.validator is not None
    columns = {column.name: FieldSpec.of(column) for column in table.columns}
    pk = columns[table.primary_key.columns[0].name]
    published_names = [pk.name, *(name for name in declaration.fields if name != pk.name)]
    published = table.c.get(PUBLISHED_COLUMN)
    if published is not None and describe_column(published).kind is not FieldKind.BOOLEAN:
        published = None
    return Publication(
        declaration=declaration,
        table=table,
        columns=columns,
        pk=pk,
        fields={name: columns[name] for name in published_names},
        published=published,
        validator=declaration.validator,
    )


def compile_object(
    publication: Publication, publications: Mapping[str, Publication], tables: Mapping[str, sa.Table]
) -> ObjectSpec:
    """The served object: its relations resolved against the other publications (DeclarationError
    names the relation that cannot be)."""
    declaration, table = publication.declaration, publication.table
    relations = resolve_relations(declaration, table, publications, tables)
    paths = resolve_paths(declaration, table, relations, publications)
    if not declaration.source.is_constructor:
        warn_unindexed(declaration, table, paths)
    return ObjectSpec(
        name=declaration.name,
        source=declaration.source,
        table=table,
        pk=publication.pk,
        fields=publication.fields,
        filterable=frozenset(declaration.filterable),
        searchable=declaration.searchable,
        sortable=frozenset(declaration.sortable),
        relations=relations,
        per_page=declaration.per_page,
        max_per_page=declaration.max_per_page,
        default_sort=declaration.default_sort,
        query=declaration.query,
        operations=declaration.operations,
        writable=declaration.writable,
        read_scope=declaration.read_scope,
        write_scope=declaration.write_scope,
        published=publication.published,
        columns=publication.columns,
        validator=publication.validator,
        audit_columns={name: table.c[name] for name in AUDIT_COLUMNS if name in table.c},
        defaults=ModelDefaults.of(table),
        search_index=declaration.search_index,
        paths=paths,
    )


def _table_of(declaration: Declaration, tables: Mapping[str, sa.Table]) -> sa.Table:
    table = tables.get(declaration.name)
    if table is None:
        raise DeclarationError(
            declaration.source, declaration.name, "table", f"table '{declaration.table_name}' does not exist"
        )
    return table
