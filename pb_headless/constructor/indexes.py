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
import re
from typing import Any

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateIndex

from pb_headless.constructor.model import PRIMARY_KEY, PUBLISHED, ApiTab, ConstructorTable
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.backends import backend_for
from pb_headless.database.dialect import dialect_name, run_ddl

log = logging.getLogger("pb_headless")

MAX_PAIRS = 8  # composite (filter, sort) indexes per table, in declaration order
DESCENDING = "-"  # before a column's name in a column set: that column descending
MARIADB_DESCENDING = (10, 8)  # the first MariaDB that reads a descending index as one
MARIADB_KEY_BYTES = 3072


def implied_indexes(table: sa.Table, tab: ApiTab, dialect: str) -> list[sa.Index]:
    """The indexes for this publication, named after their table and columns."""
    filterable = _usable(table, tab.filterable or tab.fields, dialect)
    sortable = _usable(table, tab.sortable or tab.fields, dialect)
    column_sets: list[tuple[str, ...]] = [
        (PUBLISHED, PRIMARY_KEY) if dialect == "postgresql" else (PUBLISHED,)
    ]
    column_sets += [(PUBLISHED, name) for name in dict.fromkeys([*filterable, *sortable])]
    pairs = [(PUBLISHED, f, s) for f in filterable for s in sortable if f != s]
    column_sets += [pair for pair in pairs if _fits(table, pair, dialect)][:MAX_PAIRS]
    if dialect == "mysql":
        column_sets += [(PUBLISHED, DESCENDING + name) for name in sortable]
        column_sets += [(p, f, DESCENDING + s) for p, f, s in pairs if _fits(table, (p, f, s), dialect)][
            :MAX_PAIRS
        ]
    return [sa.Index(_name(table.name, columns), *_indexed(table, columns)) for columns in column_sets]


def key_order_index(database: Database, table: sa.Table) -> str | None:
    """On MariaDB, the name of the table's `(published)` index when this process made or found it.

    A step of a deep page, `published = 1 AND id > X ORDER BY id LIMIT 999, 1`, is planned as `ref`
    access on that index (every entry from the first, filtered) once X is past about half the table,
    instead of a range starting at X: 88 ms instead of 0.5 ms at X = 800,000 of a million. Naming the
    index (`FORCE INDEX`) gives the range; it is named only when it is known to be there."""
    if dialect_name(database) != "mysql" or PUBLISHED not in table.c:
        return None
    name = _name(table.name, (PUBLISHED,))
    return name if name in backend_for(database).made_indexes else None


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
    made = backend_for(database).made_indexes
    dialect = dialect_name(database)
    for index in implied_indexes(definition, tab, dialect):
        if index.name in made:
            continue
        if is_descending(index) and not await _reads_descending(database):
            made.add(str(index.name))  # not made, and not asked about again
            continue
        try:
            if not await _exists(database, index, dialect):
                await run_ddl(database, CreateIndex(index, if_not_exists=dialect != "mysql"))
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


async def _reads_descending(database: Database) -> bool:
    """Whether this MariaDB (or MySQL 8) reads an index's descending column as such."""
    version = str(await database.fetch_val("SELECT VERSION()"))
    numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if "mariadb" in version.lower():
        return numbers >= MARIADB_DESCENDING
    return numbers >= (8, 0)


def _usable(table: sa.Table, names: tuple[str, ...], dialect: str) -> list[str]:
    return [
        name
        for name in names
        if name in table.c and name not in (PRIMARY_KEY, PUBLISHED) and _fits(table, (name,), dialect)
    ]


def _fits(table: sa.Table, columns: tuple[str, ...], dialect: str) -> bool:
    if dialect != "mysql":
        return True
    size = 0
    for name in columns:
        column_type = table.c[name].type
        if isinstance(column_type, sa.Text):
            return False
        length = getattr(column_type, "length", None)
        size += 4 * length if isinstance(column_type, sa.String) and length else 8
    return size <= MARIADB_KEY_BYTES


def _name(table: str, columns: tuple[str, ...]) -> str:
    digest = hashlib.sha1(",".join(columns).encode()).hexdigest()[:10]
    return f"pbix_{table[:40]}_{digest}"


async def _exists(database: Database, index: sa.Index, dialect: str) -> bool:
    if dialect != "mysql":
        return False  # CREATE INDEX IF NOT EXISTS does the asking
    table = index.table
    if table is None:  # an index always belongs to its table here; the attribute is optional in general
        return False
    rows = await database.fetch_all(f"SHOW INDEX FROM `{table.name}`")
    return any(row._mapping["Key_name"] == index.name for row in rows)


async def drop_indexes_on(database: Database, table: str, column: str) -> None:
    """Before a column is dropped: SQLite refuses to drop a column an index uses, so the implied
    indexes over it go first (PostgreSQL and MariaDB drop or shrink such indexes themselves); the
    change log's triggers name columns on SQLite and MariaDB, so they go too, to be made again at the
    next publication (database/change_triggers.py)."""
    await backend_for(database).change_log_triggers.drop_naming_columns(table)
    if dialect_name(database) != "sqlite":
        return
    # Its triggers name the column; it is made again at the next publication.
    await accelerator_of(database).drop_search_index(database, table)
    query = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :table"
    made = backend_for(database).made_indexes
    for row in await database.fetch_all(query, {"table": table}):
        name = str(row[0])
        if not name.startswith("pbix_"):  # only the indexes the publication implied
            continue
        columns = {info[2] for info in await database.fetch_all(f'PRAGMA index_info("{name}")')}
        if column in columns:
            await database.execute(f'DROP INDEX IF EXISTS "{name}"')
            made.discard(name)
