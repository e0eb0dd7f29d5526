"""The constructor's table definitions, kept in the site's own tables, as `ConstructorTable` values.

`load_tables` is the loader the site hands both `ConstructorSource` (the registry) and the admin
app (the API tab); `create_content_table` stores a definition and creates its SQL table.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from databases import Database

from examples.site.schema import content_fields, content_tables
from pb_headless.constructor import (
    ConstructorError,
    ConstructorField,
    ConstructorTable,
    create_table,
    transliterate,
)

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
    title = title.strip()
    if not title:
        raise ConstructorError("a table needs a title")
    if len(title) > 200:
        raise ConstructorError("a table title is at most 200 characters")
    if not fields:
        raise ConstructorError("a table needs at least one field")
    table = ConstructorTable(name=await sql_name_for(database, title), title=title, fields=tuple(fields))
    now = datetime.now(UTC).replace(tzinfo=None)
    async with database.transaction():
        await database.execute(content_tables.insert().values(name=table.name, title=title, created_at=now))
        table_id = await database.fetch_val(
            sa.select(content_tables.c.id).where(content_tables.c.name == table.name)
        )
        for position, field in enumerate(table.fields):
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
    await create_table(database, table)
    return table
