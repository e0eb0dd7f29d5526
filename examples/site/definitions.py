"""The constructor's table definitions, kept in the site's own tables, as `ConstructorTable` values.

`load_tables` is the loader the site hands both `ConstructorSource` (the registry) and the admin
app (the API tab); `create_content_table` stores a definition and creates its SQL table,
`update_content_table` and `delete_content_table` change and drop it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateColumn, DropTable

from examples.site.schema import content_fields, content_tables, dialect_of
from pb_headless.constructor import (
    ApiTabStore,
    ConstructorError,
    ConstructorField,
    ConstructorTable,
    create_table,
    table_for,
    transliterate,
)
from pb_headless.constructor.indexes import drop_indexes_on
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.dialect import run_ddl
from pb_headless.state import bump_version

TABLE_PREFIX = "ct_"  # keeps constructor tables apart from the site's and the library's own
MAX_NAME = 64


async def load_tables(database: Database) -> list[ConstructorTable]:
    """Every constructor table with its fields, in the order they were made."""
    tables = await database.fetch_all(content_tables.select().order_by(content_tables.c.id))
    fields = await database.fetch_all(
        content_fields.select().order_by(content_fields.c.table_id, content_fields.c.position)
    )
    by_table: dict[int, list[ConstructorField]] = {}
    for row in fields:
        field = row._mapping
        by_table.setdefault(field["table_id"], []).append(
            ConstructorField(
                name=field["name"],
                type=field["type"],
                required=bool(field["required"]),
                searchable=bool(field["searchable"]),
                length=field["length"],
                label=field["label"],
            )
        )
    return [
        ConstructorTable(
            name=row._mapping["name"],
            title=row._mapping["title"],
            fields=tuple(by_table.get(row._mapping["id"], ())),
        )
        for row in tables
    ]


async def find_table(database: Database, name: str) -> ConstructorTable | None:
    return next((table for table in await load_tables(database) if table.name == name), None)


async def sql_name_for(database: Database, title: str) -> str:
    """`ct_` + the transliterated title, made unique among the definitions."""
    base = (TABLE_PREFIX + (transliterate(title) or "table"))[: MAX_NAME - 3].rstrip("_")
    taken = {row[0] for row in await database.fetch_all(sa.select(content_tables.c.name))}
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    return name


async def create_content_table(
    database: Database, title: str, fields: Sequence[ConstructorField]
) -> ConstructorTable:
    """Store the definition and create its SQL table; a ConstructorError says what is wrong, nothing saved."""
    title = _checked_title(title)
    if not fields:
        raise ConstructorError("a table needs at least one field")
    table = ConstructorTable(name=await sql_name_for(database, title), title=title, fields=tuple(fields))
    now = datetime.now(UTC).replace(tzinfo=None)
    async with database.transaction():
        await database.execute(content_tables.insert().values(name=table.name, title=title, created_at=now))
        await _insert_fields(database, await _table_id(database, table.name), table.fields)
    await create_table(database, table)
    return table


async def count_rows(database: Database, table: ConstructorTable) -> int:
    sql = table_for(table)
    return int(await database.fetch_val(sa.select(sa.func.count()).select_from(sql)) or 0)


async def update_content_table(
    database: Database,
    table: ConstructorTable,
    title: str,
    kept: Sequence[ConstructorField],
    added: Sequence[ConstructorField],
) -> ConstructorTable:
    """Change a table's title and field labels/search flags, add fields and drop the ones not kept.

    An existing field keeps its name, type, length and required flag (its column and its data stay
    as they are); a new field is added as a column, and a required one only while the table is empty.
    """
    title = _checked_title(title)
    dropped = [field for field in table.fields if field.name not in {kept_field.name for kept_field in kept}]
    changed = ConstructorTable(name=table.name, title=title, fields=(*kept, *added))  # checks duplicates
    if not changed.fields:
        raise ConstructorError("a table needs at least one field; add one before removing the last")
    if any(field.required for field in added) and await count_rows(database, table):
        raise ConstructorError(
            "a new field cannot be required while the table has records (they have no value for it); "
            "add it as optional, fill it in, then make the records complete"
        )
    sql = table_for(changed)
    for field in dropped:
        await drop_indexes_on(database, table.name, field.name)
        await database.execute(
            f"ALTER TABLE {_quoted(database, table.name)} DROP COLUMN {_quoted(database, field.name)}"
        )
    for field in added:
        column = CreateColumn(sql.c[field.name]).compile(dialect=dialect_of(database))
        await database.execute(f"ALTER TABLE {_quoted(database, table.name)} ADD COLUMN {column}")
    async with database.transaction():
        table_id = await _table_id(database, table.name)
        await database.execute(
            content_tables.update().where(content_tables.c.id == table_id).values(title=title)
        )
        await database.execute(content_fields.delete().where(content_fields.c.table_id == table_id))
        await _insert_fields(database, table_id, changed.fields)
        await bump_version(database)
    return changed


async def delete_content_table(database: Database, table: ConstructorTable) -> None:
    """Drop the SQL table, its definition and its API tab: the object stops being served at once."""
    # SQLite would leave the table's FTS5 search index behind.
    await accelerator_of(database).drop_search_index(database, table.name)
    await run_ddl(database, DropTable(table_for(table), if_exists=True))
    async with database.transaction():
        table_id = await _table_id(database, table.name)
        await database.execute(content_fields.delete().where(content_fields.c.table_id == table_id))
        await database.execute(content_tables.delete().where(content_tables.c.id == table_id))
    await ApiTabStore(database).delete(table.name)  # moves the shared version: every instance forgets it


async def _table_id(database: Database, name: str) -> int:
    return int(await database.fetch_val(sa.select(content_tables.c.id).where(content_tables.c.name == name)))


async def _insert_fields(database: Database, table_id: int, fields: Sequence[ConstructorField]) -> None:
    for position, field in enumerate(fields):
        await database.execute(
            content_fields.insert().values(
                table_id=table_id,
                position=position,
                name=field.name,
                label=field.label,
                type=field.type,
                required=field.required,
                searchable=field.searchable,
                length=field.length,
            )
        )


def _checked_title(title: str) -> str:
    title = title.strip()
    if not title:
        raise ConstructorError("a table needs a title")
    if len(title) > 200:
        raise ConstructorError("a table title is at most 200 characters")
    return title


def _quoted(database: Database, name: str) -> str:
    return str(dialect_of(database).identifier_preparer.quote(name))
