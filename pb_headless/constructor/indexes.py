"""The indexes a constructor table's publication implies, created when it is published.

Every read of a constructor table narrows to `published` rows, so every index leads with `published`:

| index                                  | serves                                                |
|----------------------------------------|-------------------------------------------------------|
| (published), (published, id) on PostgreSQL | the default order by id, deep offsets, the plain count |
| (published, f) per filterable/sortable | `filter[f]=…`, `sort=f`, the filtered count           |
| (published, f, s) per filterable f and sortable s (at most `MAX_PAIRS`) | a filter with a sort |
| MariaDB: (published, s DESC), (published, f, s DESC) likewise | `sort=-s`, with a filter or not |

SQLite's and InnoDB's indexes hold the row's key after their columns, so `(published)` gives the rows
in key order there; a PostgreSQL index holds only its columns, so there the first index names `id`
as well, and the keys of a deep page or a noted position (database/positions.py) are read from the
index alone instead of from the table.

A descending sort breaks its ties by the key ascending (`ORDER BY s DESC, id ASC`). PostgreSQL reads
the ascending index backwards and sorts only the rows of one `s` by key (an incremental sort);
MariaDB cannot, and sorted every matching key before the page (75 ms for `filter[category]=c7&
sort=-published_at` on a million rows). There an index `(…, s DESC)`, which InnoDB completes with
the key ascending, gives that order as it is (0.4 ms). MariaDB reads descending indexes from 10.8 on;
an older server would make a plain copy of the ascending one, so they are made only from 10.8.

Searchable fields get none of these: a B-tree cannot serve "contains" (on SQLite the search index
of database/sqlite/search_index.py does). MariaDB cannot index TEXT columns or keys over 3072 bytes
without a prefix, so such fields are left out there. An index that cannot be made is logged and
skipped: the table is still published, only slower.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.constructor.model import PRIMARY_KEY, PUBLISHED, ApiTab, ConstructorTable
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.backends import Backend, backend_class, backend_for

log = logging.getLogger("pb_headless")

MAX_PAIRS = 8  # composite (filter, sort) indexes per table, in declaration order
DESCENDING = "-"  # before a column's name in a column set: that column descending
PREFIX = "pbix_"  # the names of the indexes a publication implies begin so


def implied_indexes(table: sa.Table, tab: ApiTab, dialect: str) -> list[sa.Index]:
    """The indexes for this publication on the database `dialect` names, named after their table
    and columns."""
    backend = backend_class(dialect)
    if backend is None:
        raise ValueError(f"pb_headless does not serve a {dialect} database")
    filterable = _usable(table, tab.filterable or tab.fields, backend)
    sortable = _usable(table, tab.sortable or tab.fields, backend)
    first = (PUBLISHED,) if backend.index_holds_key else (PUBLISHED, PRIMARY_KEY)
    column_sets: list[tuple[str, ...]] = [first]
    column_sets += [(PUBLISHED, name) for name in dict.fromkeys([*filterable, *sortable])]
    pairs = [(PUBLISHED, f, s) for f in filterable for s in sortable if f != s]
    column_sets += [pair for pair in pairs if _fits(table, pair, backend)][:MAX_PAIRS]
    if backend.makes_descending_indexes:
        column_sets += [(PUBLISHED, DESCENDING + name) for name in sortable]
        column_sets += [(p, f, DESCENDING + s) for p, f, s in pairs if _fits(table, (p, f, s), backend)][
            :MAX_PAIRS
        ]
    return [sa.Index(_name(table.name, columns), *_indexed(table, columns)) for columns in column_sets]


def key_order_index(database: Database, table: sa.Table) -> str | None:
    """On MariaDB, the name of the table's `(published)` index when this process made or found it.

    A step of a deep page, `published = 1 AND id > X ORDER BY id LIMIT 999, 1`, is planned as `ref`
    access on that index (every entry from the first, filtered) once X is past about half the table,
    instead of a range starting at X: 88 ms instead of 0.5 ms at X = 800,000 of a million. Naming the
    index (`FORCE INDEX`) gives the range; it is named only when it is known to be there."""
    backend = backend_for(database)
    if not backend.names_key_order_index or PUBLISHED not in table.c:
        return None
    name = _name(table.name, (PUBLISHED,))
    return name if name in backend.made_indexes else None


def _indexed(table: sa.Table, columns: tuple[str, ...]) -> list[sa.ColumnElement[Any]]:
    return [
        table.c[name.removeprefix(DESCENDING)].desc() if name.startswith(DESCENDING) else table.c[name]
        for name in columns
    ]


def is_descending(index: sa.Index) -> bool:
    return any(not isinstance(expression, sa.Column) for expression in index.expressions)


async def ensure_indexes(
    database: Database, table: ConstructorTable, definition: sa.Table, tab: ApiTab
) -> None:
    """Create the implied indexes that are missing (once per process and index)."""
    backend = backend_for(database)
    made = backend.made_indexes
    for index in implied_indexes(definition, tab, backend.name):
        if index.name in made:
            continue
        if is_descending(index) and not await backend.reads_descending_indexes():
            made.add(str(index.name))  # not made, and not asked about again
            continue
        try:
            await backend.create_index(index)
        except Exception as error:
            log.warning(
                "pb_headless: constructor table '%s': index %s on (%s) could not be made: %s",
                table.name,
                index.name,
                ", ".join(c.name for c in index.columns),
                error,
            )
            continue
        made.add(str(index.name))


def _usable(table: sa.Table, names: tuple[str, ...], backend: type[Backend]) -> list[str]:
    return [
        name
        for name in names
        if name in table.c and name not in (PRIMARY_KEY, PUBLISHED) and _fits(table, (name,), backend)
    ]


def _fits(table: sa.Table, columns: tuple[str, ...], backend: type[Backend]) -> bool:
    """Whether the database can index these columns whole (MariaDB: no TEXT, a bounded key)."""
    if backend.index_key_bytes is None:
        return True
    size = 0
    for name in columns:
        column_type = table.c[name].type
        if isinstance(column_type, sa.Text):
            return False
        length = getattr(column_type, "length", None)
        size += 4 * length if isinstance(column_type, sa.String) and length else 8
    return size <= backend.index_key_bytes


def _name(table: str, columns: tuple[str, ...]) -> str:
    digest = hashlib.sha1(",".join(columns).encode()).hexdigest()[:10]
    return f"{PREFIX}{table[:40]}_{digest}"


async def drop_indexes_on(database: Database, table: str, column: str) -> None:
    """Before a column is dropped: SQLite refuses to drop a column an index uses, so the implied
    indexes over it go first (PostgreSQL and MariaDB drop or shrink such indexes themselves); the
    change log's triggers name columns on SQLite and MariaDB, so they go too, to be made again at the
    next publication (database/change_triggers.py)."""
    backend = backend_for(database)
    await backend.change_log_triggers.drop_naming_columns(table)
    if backend.drops_indexes_with_column:
        return
    # Its triggers name the column; it is made again at the next publication.
    await accelerator_of(database).drop_search_index(database, table)
    backend.made_indexes.difference_update(await backend.drop_indexes_over(table, column, PREFIX))
