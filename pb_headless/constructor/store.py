"""The API-tab settings of every constructor table, kept in the database so every instance sees them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import orjson
import sqlalchemy as sa
from databases import Database

from pb_headless.constructor.model import IDENTIFIER, ApiTab, ConstructorError
from pb_headless.database.dialect import utcnow
from pb_headless.state import bump_version
from pb_headless.tables import constructor_api

log = logging.getLogger("pb_headless")

_LISTS = ("writable", "filterable", "sortable")


class ApiTabStore:
    """Reads and saves API tabs by table name; every save moves the shared state version."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def get(self, table_name: str) -> ApiTab:
        """The table's API tab; a table never saved has the default one (switch off)."""
        query = sa.select(constructor_api).where(constructor_api.c.table_name == table_name)
        row = await self.database.fetch_one(query)
        return ApiTab() if row is None else _tab_from_row(row._mapping)

    async def all(self) -> dict[str, ApiTab]:
        rows = await self.database.fetch_all(sa.select(constructor_api))
        return {row._mapping["table_name"]: _tab_from_row(row._mapping) for row in rows}

    async def save(self, table_name: str, tab: ApiTab) -> None:
        """Store the tab; every instance serves the change on its next request, without a restart."""
        if not isinstance(table_name, str) or not IDENTIFIER.fullmatch(table_name):
            raise ConstructorError(f"table {table_name!r}: a table name is 1-64 of [A-Za-z0-9_]")
        if not isinstance(tab, ApiTab):
            raise ConstructorError("save() takes an ApiTab")
        values = _row_of(tab)
        async with self.database.transaction():
            this = constructor_api.c.table_name == table_name
            exists = await self.database.fetch_val(
                sa.select(sa.func.count()).select_from(constructor_api).where(this)
            )
            if exists:
                await self.database.execute(constructor_api.update().where(this).values(**values))
            else:
                await self.database.execute(constructor_api.insert().values(table_name=table_name, **values))
            await bump_version(self.database)

    async def delete(self, table_name: str) -> None:
        """Forget a table's tab (when the host drops the table): it is no longer published."""
        async with self.database.transaction():
            this = constructor_api.c.table_name == table_name
            await self.database.execute(constructor_api.delete().where(this))
            await bump_version(self.database)


def _row_of(tab: ApiTab) -> dict[str, Any]:
    return {
        "enabled": tab.enabled,
        "fields": _dump(tab.fields),
        "operations": _dump(tab.operations),
        "url_name": tab.url_name,
        **{key: None if getattr(tab, key) is None else _dump(getattr(tab, key)) for key in _LISTS},
        "updated_at": utcnow(),
    }


def _tab_from_row(row: Mapping[str, Any]) -> ApiTab:
    """The stored tab; a row that no longer reads as a valid tab counts as switched off, and is logged,
    so one hand-edited row cannot stop the registry from building."""
    try:
        return ApiTab(
            enabled=bool(row["enabled"]),
            fields=_load(row["fields"]) or (),
            operations=_load(row["operations"]) or ("list", "show"),
            url_name=row["url_name"],
            **{key: _load(row[key]) for key in _LISTS},
        )
    except (ConstructorError, ValueError, TypeError) as error:
        log.error(
            "pb_headless: the API tab of table '%s' is unreadable and counts as off: %s",
            row["table_name"],
            error,
        )
        return ApiTab()


def _dump(names: tuple[str, ...]) -> str:
    return orjson.dumps(list(names)).decode()


def _load(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)
