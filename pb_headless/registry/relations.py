"""Resolves the relations a declaration lists in `with` into `RelationSpec`s.

Where a relation name leads, in this order (docs/declarations.md "Relations in `with`"):

1. a declarative class's `relationship()` of that name (many-to-many ones through `secondary=` too);
2. a foreign key on this table in a column `<name>_id` or `<name>` (to-one);
3. a table named `<name>` with a foreign key to this table (to-many);
4. an association table with one foreign key to this table and one to a table named `<name>` or
   `<prefix>_<name>` that does not point at this table itself (many-to-many, as Core tables say it);
5. a table named `<prefix>_<name>` with a foreign key to this table (to-many).

The related rows obey the object that publishes the related table: its published fields (when the
declaration lists none), its `published` flag and `query`, and its `max_per_page` as the bound of a
to-many relation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import sqlalchemy as sa

from pb_headless.fields import FieldKind, describe_column
from pb_headless.registry.declaration import (
    DEFAULT_MAX_PER_PAGE,
    PUBLISHED_COLUMN,
    Declaration,
    DeclarationError,
    RelationDeclaration,
)
from pb_headless.registry.spec import FieldSpec, RelationSpec, Through


class Publisher(Protocol):
    """What a relation needs to know of the object publishing its related table."""

    @property
    def declaration(self) -> Declaration: ...
    @property
    def table(self) -> sa.Table: ...
    @property
    def fields(self) -> Mapping[str, FieldSpec]: ...
    @property
    def published(self) -> sa.Column[Any] | None: ...


@dataclass(frozen=True, slots=True)
class _Path:
    """Where a relation leads, before its fields and narrowing are known."""

    many: bool
    table: sa.Table
    local: sa.Column[Any]
    remote: sa.Column[Any]
    through: Through | None = None


def resolve_relations(
    declaration: Declaration,
    table: sa.Table,
    publishers: Mapping[str, Publisher],
    tables: Mapping[str, sa.Table],
) -> dict[str, RelationSpec]:
    """Every relation of the declaration, by name; a DeclarationError names the first that fails."""
    return {
        relation.name: _relation(declaration, table, relation, publishers, tables)
        for relation in declaration.relations
    }


def _relation(
    declaration: Declaration,
    table: sa.Table,
    relation: RelationDeclaration,
    publishers: Mapping[str, Publisher],
    tables: Mapping[str, sa.Table],
) -> RelationSpec:
    path = _path(declaration, table, relation.name, tables)
    publisher = publisher_of(path.table, relation.name, publishers)
    if publisher is not None and publisher.table is not path.table:
        # The same table seen through another MetaData (a model here, a reflected table there):
        # use the publisher's, which its `query` refers to.
        path = _Path(
            path.many, publisher.table, path.local, publisher.table.c[path.remote.name], path.through
        )
    narrowing = publisher.declaration if publisher is not None else None
    return RelationSpec(
        name=relation.name,
        many=path.many,
        table=path.table,
        local=path.local,
        remote=path.remote,
        fields=_fields(declaration, relation, path.table, publisher),
        published=publisher.published if publisher is not None else _published_column(path.table),
        query=narrowing.query if narrowing else None,
        limit=narrowing.max_per_page if narrowing else DEFAULT_MAX_PER_PAGE,
        order=_order(path.table, narrowing.default_sort if narrowing else ()),
        through=path.through,
    )


def _path(declaration: Declaration, table: sa.Table, name: str, tables: Mapping[str, sa.Table]) -> _Path:
    exact = [tables[name]] if name in tables else []
    prefixed = [tables[key] for key in sorted(tables) if key.endswith("_" + name) and key != name]
    found = (
        _from_mapper(declaration.model, name)
        or _to_one(table, name)
        or _to_many(table, exact)
        or _through(table, exact + prefixed, tables)
        or _to_many(table, prefixed)
    )
    if found is None:
        raise DeclarationError(
            declaration.source,
            declaration.name,
            "with",
            f"relation '{name}' matches no foreign key: expected a column '{name}_id' referencing another "
            f"table, a table '{name}' (or '<prefix>_{name}') referencing '{table.name}', or an "
            f"association table referencing both",
        )
    return found


def _from_mapper(model: Any, name: str) -> _Path | None:
    if model is None or isinstance(model, sa.Table):
        return None
    try:
        mapper = sa.inspect(model)
    except sa.exc.NoInspectionAvailable:
        return None
    prop = mapper.relationships.get(name) if hasattr(mapper, "relationships") else None
    if prop is None:
        return None
    if prop.secondary is not None:
        if len(prop.synchronize_pairs) != 1 or len(prop.secondary_synchronize_pairs) != 1:
            return None
        local, through_local = prop.synchronize_pairs[0]
        remote, through_remote = prop.secondary_synchronize_pairs[0]
        return _Path(
            prop.uselist,
            _owner(remote),
            local,
            remote,
            Through(prop.secondary, through_local, through_remote),
        )
    if len(prop.local_remote_pairs) != 1:
        return None
    local, remote = prop.local_remote_pairs[0]
    return _Path(prop.uselist, _owner(remote), local, remote)


def _to_one(table: sa.Table, name: str) -> _Path | None:
    for column_name in (f"{name}_id", name):
        column = table.c.get(column_name)
        if column is None:
            continue
        target = next(_targets(column), None)
        if target is not None:
            return _Path(False, _owner(target), column, target)
    return None


def _to_many(table: sa.Table, candidates: list[sa.Table]) -> _Path | None:
    for other in candidates:
        for column, target in _keys_to(other, table):
            return _Path(True, other, table.c[target.name], column)
    return None


def _through(table: sa.Table, named: list[sa.Table], tables: Mapping[str, sa.Table]) -> _Path | None:
    """A Core association table: one key to this table, one to a table the relation names (one that
    does not point at this table itself: `article_tags` is the association, not the target)."""
    targets = [t for t in named if t.name != table.name and not any(_keys_to(t, table))]
    for other in (tables[key] for key in sorted(tables)):
        if other.name == table.name:
            continue
        to_self = list(_keys_to(other, table))
        to_target = [
            pair for target in targets if target.name != other.name for pair in _keys_to(other, target)
        ]
        if len(to_self) == 1 and len(to_target) == 1:
            (through_local, local), (through_remote, remote) = to_self[0], to_target[0]
            through = Through(other, through_local, through_remote)
            return _Path(True, _owner(remote), table.c[local.name], remote, through)
    return None


def _keys_to(table: sa.Table, target: sa.Table) -> Iterator[tuple[sa.Column[Any], sa.Column[Any]]]:
    """(column, the column it points at) for each foreign key of `table` to `target` (by name)."""
    for column in table.columns:
        for pointed in _targets(column):
            if pointed.table is target or pointed.table.name == target.name:
                yield column, pointed


def _owner(column: sa.Column[Any]) -> sa.Table:
    """The table a column of a foreign key or relationship belongs to (always a `Table` here)."""
    table = column.table
    assert isinstance(table, sa.Table), table
    return table


def _targets(column: sa.Column[Any]) -> Iterator[sa.Column[Any]]:
    """The columns a column's foreign keys point at, skipping keys to tables that are not known."""
    for foreign_key in column.foreign_keys:
        try:
            yield foreign_key.column
        except sa.exc.NoReferencedTableError:
            continue


def publisher_of(table: sa.Table, relation: str, publishers: Mapping[str, Publisher]) -> Publisher | None:
    """The object publishing the related table; when several do, the one named like the relation,
    else the one named like the table, else the first by name."""
    candidates = {name: p for name, p in publishers.items() if p.table.name == table.name}
    for preferred in (relation, table.name):
        if preferred in candidates:
            return candidates[preferred]
    return candidates[min(candidates)] if candidates else None


def _fields(
    declaration: Declaration, relation: RelationDeclaration, table: sa.Table, publisher: Publisher | None
) -> tuple[FieldSpec, ...]:
    if relation.fields is None:
        if publisher is None:
            raise DeclarationError(
                declaration.source,
                declaration.name,
                "with",
                f"relation '{relation.name}': no field list and no object publishes table '{table.name}'; "
                f"write it as '{relation.name}:field1,field2'",
            )
        return tuple(publisher.fields.values())
    unknown = [field for field in relation.fields if field not in table.c]
    if unknown:
        raise DeclarationError(
            declaration.source,
            declaration.name,
            "with",
            f"relation '{relation.name}': unknown field '{unknown[0]}' in table '{table.name}'",
        )
    pk = table.primary_key.columns[0].name if len(table.primary_key.columns) == 1 else None
    names = [pk, *(f for f in relation.fields if f != pk)] if pk else list(relation.fields)
    return tuple(FieldSpec.of(table.c[f]) for f in names)


def _published_column(table: sa.Table) -> sa.Column[Any] | None:
    column = table.c.get(PUBLISHED_COLUMN)
    return column if column is not None and describe_column(column).kind is FieldKind.BOOLEAN else None


def _order(
    table: sa.Table, default_sort: tuple[tuple[str, bool], ...]
) -> tuple[tuple[sa.Column[Any], bool], ...]:
    """The related object's own default order, then its primary key ascending: the records a bounded
    to-many relation keeps are the first ones a list of the related object would show."""
    order: dict[str, tuple[sa.Column[Any], bool]] = {}
    for name, descending in default_sort:
        column = table.c.get(name)
        if column is not None and describe_column(column).kind is not FieldKind.JSON and name not in order:
            order[name] = (column, descending)
    for column in table.primary_key.columns:
        order.setdefault(column.name, (column, False))
    return tuple(order.values())
