"""What the migration tests ask a database directly: its version, its tables, its schema's differences."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from databases import Database

from pb_headless.migrations import engine
from pb_headless.migrations.catalog import existing_tables
from pb_headless.migrations.runner import VERSION_TABLE
from pb_headless.tables import metadata


async def versions(database: Database) -> list[str]:
    rows = await database.fetch_all(sa.text(f"SELECT version_num FROM {VERSION_TABLE}"))
    return [row[0] for row in rows]


async def tables(database: Database) -> set[str]:
    return await existing_tables(database)


async def schema_differences(database: Database) -> list[Any]:
    """Alembic's comparison of the database's library tables with `tables.metadata` ([] when equal)."""

    def compare(connection: sa.Connection) -> list[Any]:
        def ours(obj: Any, name: str | None, kind: str, reflected: bool, compare_to: Any) -> bool:
            return not (kind == "table" and name not in metadata.tables)

        context = MigrationContext.configure(
            connection, opts={"include_object": ours, "compare_type": True, "compare_server_default": False}
        )
        return compare_metadata(context, metadata)

    return await engine.run_locked(database, compare)
