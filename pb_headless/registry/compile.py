"""Turns checked declarations with resolved tables into `ObjectSpec`s, relations included."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from pb_headless.fields import FieldKind, describe_column
from pb_headless.registry.declaration import (
    Declaration,
    DeclarationError,
    check_columns,
    compile_declared_rules,
)
from pb_headless.registry.spec import FieldSpec, ObjectSpec, RelationSpec

PUBLISHED_COLUMN = "published"
AUDIT_COLUMNS = ("created_by", "updated_by")


def compile_object(declaration: Declaration, table: sa.Table) -> ObjectSpec:
    """Everything but relations, which need the other objects (see `attach_relations`)."""
    check_columns(declaration, table)
    columns = {column.name: FieldSpec.of(column) for column in table.columns}
    pk = columns[table.primary_key.columns[0].name]
    published_names = [pk.name, *(name for name in declaration.fields if name != pk.name)]
    published = table.c.get(PUBLISHED_COLUMN)
    if published is not None and describe_column(published).kind is not FieldKind.BOOLEAN:
        published = None
    return ObjectSpec(
        name=declaration.name, source=declaration.source, table=table, pk=pk,
        fields={name: columns[name] for name in published_names},
        filterable=frozenset(declaration.filterable), searchable=declaration.searchable,
        sortable=frozenset(declaration.sortable), relations={}, per_page=declaration.per_page,
        max_per_page=declaration.max_per_page, default_sort=declaration.default_sort,
        query=declaration.query, operations=declaration.operations, writable=declaration.writable,
        read_scope=declaration.read_scope, write_scope=declaration.write_scope, published=published,
        columns=columns, validator=compile_declared_rules(declaration, table),
        audit_columns={name: table.c[name] for name in AUDIT_COLUMNS if name in table.c},
    )


def attach_relations(spec: ObjectSpec, declaration: Declaration, by_table: Mapping[str, ObjectSpec],
                     tables: Mapping[str, sa.Table]) -> ObjectSpec:
    """The spec with its `with` relations resolved against foreign keys and the other objects."""
    if not declaration.relations:
        return spec
    relations = {}
    for relation in declaration.relations:
        resolved = _resolve(spec, relation.name, tables, declaration)
        many, table, local, remote = resolved
        fields = _relation_fields(declaration, relation.name, relation.fields, table, by_table)
        published = table.c.get(PUBLISHED_COLUMN)
        relations[relation.name] = RelationSpec(
            name=relation.name, many=many, table=table, local=local, remote=remote, fields=fields,
            published=(published if published is not None
                       and describe_column(published).kind is FieldKind.BOOLEAN else None),
        )
    object.__setattr__(spec, "relations", relations)
    return spec


def _resolve(spec: ObjectSpec, name: str, tables: Mapping[str, sa.Table],
             declaration: Declaration) -> tuple[bool, sa.Table, sa.Column[Any], sa.Column[Any]]:
    from_model = _from_mapper(declaration.model, name)
    if from_model is not None:
        return from_model
    table = spec.table
    for column_name in (f"{name}_id", name):
        column = table.c.get(column_name)
        if column is not None and column.foreign_keys:
            target = next(iter(column.foreign_keys)).column
            return False, target.table, column, target  # type: ignore[return-value]
    for other in _referencing_candidates(tables, name):
        for column in other.columns:
            for foreign_key in column.foreign_keys:
                if foreign_key.column.table is table or foreign_key.column.table.name == table.name:
                    return True, other, table.c[foreign_key.column.name], column
    raise DeclarationError(declaration.source, declaration.name, "with",
                           f"relation '{name}' matches no foreign key: expected a column '{name}_id' "
                           f"referencing another table, or a table '{name}' (or '<prefix>_{name}') "
                           f"referencing '{table.name}'")


def _referencing_candidates(tables: Mapping[str, sa.Table], name: str) -> list[sa.Table]:
    """Tables a to-many relation may name: exactly, or with a prefix (`comments` → `blog_comments`)."""
    exact = [tables[name]] if name in tables else []
    return exact + [table for key, table in tables.items() if key.endswith("_" + name) and key != name]


def _from_mapper(model: Any, name: str) -> tuple[bool, sa.Table, sa.Column[Any], sa.Column[Any]] | None:
    if model is None or isinstance(model, sa.Table):
        return None
    try:
        mapper = sa.inspect(model)
    except sa.exc.NoInspectionAvailable:
        return None
    prop = mapper.relationships.get(name) if hasattr(mapper, "relationships") else None
    if prop is None or len(prop.local_remote_pairs) != 1:
        return None
    local, remote = prop.local_remote_pairs[0]
    return prop.uselist, remote.table, local, remote


def _relation_fields(declaration: Declaration, name: str, listed: tuple[str, ...] | None, table: sa.Table,
                     by_table: Mapping[str, ObjectSpec]) -> tuple[FieldSpec, ...]:
    if listed is None:
        publisher = by_table.get(table.name)
        if publisher is None:
            raise DeclarationError(
                declaration.source, declaration.name, "with",
                f"relation '{name}': no field list and no object publishes table '{table.name}'; "
                f"write it as '{name}:field1,field2'")
        return tuple(publisher.fields.values())
    unknown = [field for field in listed if field not in table.c]
    if unknown:
        raise DeclarationError(declaration.source, declaration.name, "with",
                               f"relation '{name}': unknown field '{unknown[0]}' in table '{table.name}'")
    pk = table.primary_key.columns[0].name if len(table.primary_key.columns) == 1 else None
    names = [pk, *(f for f in listed if f != pk)] if pk else list(listed)
    return tuple(FieldSpec.of(table.c[f]) for f in names)
