"""Writes as a site's own code makes them, in plain SQL: the change log's triggers record each one in
the same transaction (docs/changes.md), and the webhooks deliver from that log."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless import HeadlessAPI
from tests.support.demo import demo_registry


async def with_change_log(database: Database) -> None:
    """The triggers on the demo's published tables, installed as a starting instance installs them."""
    api = HeadlessAPI(database, demo_registry(), webhooks=False)
    await api.startup()
    await api.shutdown()


async def create_row(database: Database, table: sa.Table, values: dict[str, Any]) -> None:
    await database.execute(table.insert().values(**values))


async def update_row(database: Database, table: sa.Table, key: Any, values: dict[str, Any]) -> None:
    await database.execute(table.update().where(table.c.id == key).values(**values))


async def delete_row(database: Database, table: sa.Table, key: Any) -> None:
    await database.execute(table.delete().where(table.c.id == key))
