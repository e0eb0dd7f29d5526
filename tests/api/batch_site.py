"""The demo site with two writable objects and one whose names only the database keeps unique: what
the batch tests (docs/writes.md, "Atomic batches") write to."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.schema import CreateTable

from pb_headless import ApiRegistry
from pb_headless.database.dialect import dialect_of
from tests.support.demo import DECLARATIONS, articles, authors, create_demo

BATCH = "/api/pb/v1/batch"
ALL = ["list", "show", "create", "update", "delete"]

labels = sa.Table(
    "batch_labels",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(50), nullable=False, unique=True),  # no `unique` rule: the database says no
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)


def batch_registry() -> ApiRegistry:
    registry = ApiRegistry()
    registry.register("articles", DECLARATIONS["articles"])
    registry.register(
        "authors",
        {
            **DECLARATIONS["authors"],
            "operations": ALL,
            "writable": ["name", "email"],
            "rules": {"name": "required|string|max:100", "email": "nullable|email|unique"},
        },
    )
    registry.register(
        "labels",
        {"model": labels, "fields": ["name"], "operations": ["list", "show", "create"], "writable": ["name"]},
    )
    return registry


async def create_batch_site(database: Any) -> None:
    await create_demo(database)
    statement = CreateTable(labels, if_not_exists=True).compile(dialect=dialect_of(database))
    await database.execute(str(statement))


async def count(database: Any, table: sa.Table, *where: Any) -> int:
    return int(await database.fetch_val(sa.select(sa.func.count()).select_from(table).where(*where)))


async def snapshot(database: Any) -> dict[str, Any]:
    """Everything a batch of these tests could have changed, read from the database itself."""
    tables = {"articles": articles, "authors": authors, "labels": labels}
    state: dict[str, Any] = {}
    for name, table in tables.items():
        rows = await database.fetch_all(sa.select(table).order_by(table.c.id))
        state[name] = [tuple(row) for row in rows]
    return state


def op(kind: str, name: str, **members: Any) -> dict[str, Any]:
    return {"op": kind, "object": name, **members}


async def serve_batch_site(database: Any, host_factory: Any) -> Any:
    """The batch site on `database`, served, with `host.headers` carrying a `*` token."""
    await create_batch_site(database)
    host = await host_factory(database, batch_registry())
    host.headers = host.auth(await host.token("*"))
    return host
