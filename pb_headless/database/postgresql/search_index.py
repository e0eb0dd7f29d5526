"""The search index of a published constructor table on PostgreSQL: `pg_trgm` GIN indexes on the
folded text (docs/performance.md, "The search index on PostgreSQL").

`search` and a `like` filter on PostgreSQL are `lower(field) LIKE lower(:pattern) ESCAPE '!'`
(query/compiler.py `_contains`). For every searchable text field the publication makes

    CREATE INDEX "pbtrgm_<table>_<digest>" ON "<table>" USING gin (lower("<field>") gin_trgm_ops)

on the very expression the compiler emits, so the planner serves the `LIKE` from it: the index gives
the rows holding every trigram of the pattern, and PostgreSQL tests each of them with the `LIKE`
itself (a trigram index is always rechecked). No query changes and no answer can: with or without
the index the same condition decides every row, only the rows it is tried on differ.

`pg_trgm` is an extension. It is created when missing (`CREATE EXTENSION IF NOT EXISTS pg_trgm`, a
trusted extension since PostgreSQL 13: the right to create in the database is enough); when that
is refused or the server lacks it, one warning says how to enable it and search reads the table as
before. The indexes are made when the table is published and again when one is missing, one
instance at a time (an advisory lock), like the other implied indexes (constructor/indexes.py).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time

import sqlalchemy as sa
from databases import Database

from pb_headless.database.backends import backend_for
from pb_headless.database.dialect import dialect_name
from pb_headless.fields.kinds import describe_column

log = logging.getLogger("pb_headless")

PREFIX = "pbtrgm_"
EXTENSION = "pg_trgm"
ENABLE = (
    "to index them, have the database's owner run CREATE EXTENSION pg_trgm; in this database "
    "(the server needs PostgreSQL's contrib modules), then restart or publish again "
    "(docs/performance.md, 'The search index on PostgreSQL')"
)


def index_name(table: str, column: str) -> str:
    """At most 58 characters, within PostgreSQL's 63."""
    digest = hashlib.sha1(f"{table}.{column}".encode()).hexdigest()[:10]
    return f"{PREFIX}{table[:40]}_{digest}"


def indexable(definition: sa.Table, searchable: tuple[str, ...]) -> tuple[str, ...]:
    """The searchable columns the compiler folds as they are, `lower(column)`: plain text. Any other
    (an enum, a number) is cast first, which this index does not serve."""
    return tuple(
        name
        for name in searchable
        if name in definition.c and describe_column(definition.c[name]).is_plain_text
    )


async def ensure_search_index(
    database: Database, definition: sa.Table, searchable: tuple[str, ...]
) -> tuple[str, ...]:
    """The names of the table's trigram indexes, each made when missing; () without `pg_trgm`."""
    if dialect_name(database) != "postgresql":
        return ()
    columns = indexable(definition, searchable)
    present = await _present(database, definition)
    wanted = {index_name(definition.name, column): column for column in columns}
    for name in sorted(set(present) - set(wanted)):  # a field no longer searchable: its index goes
        try:
            await drop_index(database, definition.schema, name)
        except Exception as error:  # not the table's owner: the index stays, only writes pay for it
            log.warning(
                "pb_headless: constructor table '%s': %s could not be dropped (%s)",
                definition.name,
                name,
                error,
            )
    if not columns:
        return ()
    operators = await operator_class(database, definition.name)
    if operators is None:
        return ()
    made: list[str] = []
    for name, column in wanted.items():
        qualified = _qualified(definition.schema, name)
        if name in present:
            made.append(name)
            continue
        try:
            started = time.monotonic()
            async with database.transaction():
                # Another instance making the same index: wait for it, then find it made.
                await database.execute("SELECT pg_advisory_xact_lock(hashtext(:name))", {"name": qualified})
                table = _qualified(definition.schema, definition.name)
                await database.execute(
                    f"CREATE INDEX IF NOT EXISTS {_quoted(name)} ON {table} "
                    f"USING gin (lower({_quoted(column)}) {operators})"
                )
        except Exception as error:
            log.warning(
                "pb_headless: constructor table '%s': search index %s on %s could not be made (%s); "
                "search reads the table",
                definition.name,
                name,
                column,
                error,
            )
            continue
        log.info(
            "pb_headless: constructor table '%s': search index %s on %s made in %.1f s",
            definition.name,
            name,
            column,
            time.monotonic() - started,
        )
        made.append(name)
    return tuple(made)


async def drop_search_index(database: Database, table: str, schema: str | None = None) -> None:
    """Drop the table's trigram indexes (PostgreSQL drops the one of a dropped column by itself)."""
    if dialect_name(database) != "postgresql":
        return
    for name in await _present(database, sa.Table(table, sa.MetaData(), schema=schema)):
        await drop_index(database, schema, name)


async def drop_index(database: Database, schema: str | None, name: str) -> None:
    async with database.transaction():  # a savepoint inside the caller's: a refusal stays in it
        await database.execute(f"DROP INDEX IF EXISTS {_qualified(schema, name)}")


async def _present(database: Database, definition: sa.Table) -> list[str]:
    """The trigram indexes this library made on the table, by name."""
    rows = await database.fetch_all(
        "SELECT indexname FROM pg_indexes WHERE tablename = :table "
        "AND schemaname = coalesce(:schema, current_schema()) AND indexname LIKE :prefix",
        {"table": definition.name, "schema": definition.schema, "prefix": f"{PREFIX}%"},
    )
    own = re.compile(re.escape(f"{PREFIX}{definition.name[:40]}_") + r"[0-9a-f]{10}")
    return [str(row[0]) for row in rows if own.fullmatch(str(row[0]))]


async def operator_class(database: Database, table: str) -> str | None:
    """`"<schema>".gin_trgm_ops`, the extension created when missing; None (told once) when it cannot be."""
    found = await _extension_schema(database)
    if found is None:
        try:
            async with database.transaction():  # a savepoint when the caller is in a transaction
                await database.execute(f"CREATE EXTENSION IF NOT EXISTS {EXTENSION}")
        except Exception as error:
            backend = backend_for(database)
            if not backend.told_missing_extension:  # logged once per database
                backend.told_missing_extension = True
                log.warning(
                    "pb_headless: constructor table '%s': the PostgreSQL extension %s is not available "
                    "(%s: %s); search and like filters read the whole table; %s",
                    table,
                    EXTENSION,
                    type(error).__name__,
                    str(error).strip(),
                    ENABLE,
                )
            return None
        found = await _extension_schema(database)
        if found is None:
            return None
    return f"{_quoted(found)}.gin_trgm_ops"


async def _extension_schema(database: Database) -> str | None:
    value = await database.fetch_val(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = :name",
        {"name": EXTENSION},
    )
    return None if value is None else str(value)


def _qualified(schema: str | None, name: str) -> str:
    return _quoted(name) if schema is None else f"{_quoted(schema)}.{_quoted(name)}"


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
