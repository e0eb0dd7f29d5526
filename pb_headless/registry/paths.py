"""The paths of `filterable` that lead one level through a relation (`author.name`, `tags.slug`).

The declaration's own check (registry/declaration.py) made sure the relation is listed in `with`;
here, with the relation resolved, the related table must have the field. A path is usable only where
a client could see the field anyway: the relation loads the field with `with`, and the object that
publishes the related table publishes it. Any other declared path stays in `filterable`, and a list
ignores it and names it in `meta.ignored`, whatever the related rows hold (docs/query.md).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

import sqlalchemy as sa

from pb_headless.registry.declaration import PATH_SEPARATOR, Declaration, DeclarationError
from pb_headless.registry.relations import Publisher, publisher_of
from pb_headless.registry.spec import FieldSpec, PathSpec, RelationSpec

log = logging.getLogger("pb_headless")


def resolve_paths(
    declaration: Declaration,
    table: sa.Table,
    relations: Mapping[str, RelationSpec],
    publishers: Mapping[str, Publisher],
) -> dict[str, PathSpec]:
    """The usable paths by name, in `filterable` order; a DeclarationError names a path whose
    related table has no such field or that leads back to the object's own table."""
    paths: dict[str, PathSpec] = {}
    for name in declaration.filterable:
        if PATH_SEPARATOR not in name:
            continue
        relation_name, _, field_name = name.partition(PATH_SEPARATOR)
        relation = relations[relation_name]
        _check(declaration, table, name, relation, field_name)
        if field_name in _visible(relation, publishers):
            paths[name] = PathSpec(name, relation, FieldSpec.of(relation.table.c[field_name]))
        else:
            log.warning(
                "pb_headless: %s: object '%s', key 'filterable': path '%s' is ignored: no object "
                "publishes field '%s' of relation '%s'",
                declaration.source, declaration.name, name, field_name, relation_name,
            )  # fmt: skip
    return paths


def _check(declaration: Declaration, table: sa.Table, path: str, relation: RelationSpec, field: str) -> None:
    if field not in relation.table.c:
        columns = ", ".join(sorted(relation.table.c.keys()))
        problem = f"path '{path}': unknown field '{field}' (table '{relation.table.name}' has: {columns})"
        raise DeclarationError(declaration.source, declaration.name, "filterable", problem)
    if relation.table.name == table.name:
        # The related rows would be read from the very table the list reads: the two cannot be told
        # apart in one statement without an alias, which the related object's `query` does not know.
        problem = f"path '{path}': relation '{relation.name}' leads back to table '{table.name}'"
        raise DeclarationError(declaration.source, declaration.name, "filterable", problem)


def _visible(relation: RelationSpec, publishers: Mapping[str, Publisher]) -> set[str]:
    """The fields `with` shows of this relation that the related object publishes too."""
    publisher = publisher_of(relation.table, relation.name, publishers)
    if publisher is None:
        return set()
    return {field.name for field in relation.fields} & set(publisher.fields)


def warn_unindexed(declaration: Declaration, table: sa.Table, paths: Mapping[str, PathSpec]) -> None:
    """At start-up, a declared model's path that no index serves: on a large table each such filter
    reads the whole related table (constructor tables get theirs, constructor/indexes.py)."""
    for path in paths.values():
        missing = unindexed(path, table)
        if missing:
            log.warning(
                "pb_headless: %s: object '%s', key 'filterable': path '%s' has no index on %s; "
                "a filter on it reads the whole table (docs/query.md, \"Indexes for paths\")",
                declaration.source, declaration.name, path.name, ", ".join(missing),
            )  # fmt: skip


def unindexed(path: PathSpec, table: sa.Table) -> list[str]:
    """The columns (`table.column`) a filter on this path reads without an index starting with them:
    the related field, and the keys that lead to the related rows from the object's table."""
    names = (
        f"{column.table.name}.{column.name}" for column in _needed(path, table) if not _leads_an_index(column)
    )
    return list(dict.fromkeys(names))


def _needed(path: PathSpec, table: sa.Table) -> Iterator[sa.Column[Any]]:
    relation = path.relation
    yield path.field.column
    if relation.through is not None:
        yield relation.through.local
        yield relation.through.remote
    yield relation.local
    yield relation.remote


def _leads_an_index(column: sa.Column[Any]) -> bool:
    owner = column.table
    if isinstance(owner, sa.Table):
        keys = [list(owner.primary_key.columns)]
        keys += [list(index.columns) for index in owner.indexes]
        keys += [list(c.columns) for c in owner.constraints if isinstance(c, sa.UniqueConstraint)]
        if any(key and key[0].name == column.name for key in keys):
            return True
    return bool(column.index or column.unique)
