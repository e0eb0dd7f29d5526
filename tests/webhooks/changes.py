"""Writes as the change log's triggers record them: the row and its `pb_changes` entry in one
transaction (the triggers come with the change feed; until then the tests write the entry)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import utcnow
from pb_headless.tables import changes


async def record_change(database: Database, table: sa.Table, op: str, key: Any) -> None:
    await database.execute(
        changes.insert().values(table_name=table.name, row_key=str(key), op=op, changed_at=utcnow())
    )


async def create_row(database: Database, table: sa.Table, values: dict[str, Any]) -> None:
    async with database.transaction():
        await database.execute(table.insert().values(**values))
        await record_change(database, table, "create", values["id"])


async def update_row(database: Database, table: sa.Table, key: Any, values: dict[str, Any]) -> None:
    async with database.transaction():
        await database.execute(table.update().where(table.c.id == key).values(**values))
        await record_change(database, table, "update", key)


async def delete_row(database: Database, table: sa.Table, key: Any) -> None:
    async with database.transaction():
        await database.execute(table.delete().where(table.c.id == key))
        await record_change(database, table, "delete", key)
