"""`ConstructorSource`: the registry source that publishes the host's constructor tables by their API tabs.

The host owns its table definitions and hands the source a loader for them; the source joins them
with the API tabs stored by the library. The registry calls it on every (re)build, that is once per
change of the shared state version, so a saved tab is served on the next request of every instance.

    registry.add_source(ConstructorSource(load_tables))   # async def load_tables(database) -> [...]
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace

import sqlalchemy as sa
from databases import Database

from pb_headless.constructor.indexes import ensure_indexes
from pb_headless.constructor.model import ApiTab, ConstructorTable
from pb_headless.constructor.publishing import declaration_for
from pb_headless.constructor.store import ApiTabStore
from pb_headless.database.accelerators import accelerator_of
from pb_headless.registry.declaration import Declaration, DeclarationError

log = logging.getLogger("pb_headless")

TableLoader = Callable[[Database], Awaitable[Iterable[ConstructorTable]] | Iterable[ConstructorTable]]


class ConstructorSource:
    """Calling it with the database gives `{object name: Declaration}` for the published tables.

    A table that cannot be published (its tab names an object name another table already took, or
    its SQL table lacks a defined column) is logged and left out; the other objects are still served.
    A failing loader or database fails the build, which the next request tries again.
    """

    def __init__(self, load_tables: TableLoader) -> None:
        if not callable(load_tables):
            raise TypeError("ConstructorSource takes a callable: load_tables(database) -> [ConstructorTable]")
        self.load_tables = load_tables

    async def __call__(self, database: Database) -> dict[str, Declaration]:
        tables = await self.tables(database)
        tabs = await ApiTabStore(database).all()
        published: dict[str, Declaration] = {}
        for table in tables:
            found = _declaration(table, tabs.get(table.name, ApiTab()))
            if found is None:
                continue
            name, declaration = found
            if name in published:
                log.error(
                    "pb_headless: constructor table '%s' is not published: its URL name '%s' is "
                    "already used by table '%s'; give it another URL name",
                    table.name,
                    name,
                    published[name].source.name,
                )
                continue
            if await _is_in_database(database, table, declaration):
                assert declaration.table is not None
                await ensure_indexes(database, table, declaration.table, tabs.get(table.name, ApiTab()))
                index = await accelerator_of(database).ensure_search_index(
                    database, declaration.table, declaration.searchable
                )
                declaration = replace(declaration, search_index=index)
                published[name] = declaration
        return published

    async def tables(self, database: Database) -> list[ConstructorTable]:
        """The host's table definitions, as its loader gives them."""
        loaded = self.load_tables(database)
        if inspect.isawaitable(loaded):
            loaded = await loaded
        tables = list(loaded)
        for table in tables:
            if not isinstance(table, ConstructorTable):
                raise TypeError(f"load_tables gave {table!r}; it must give ConstructorTable values")
        return tables


def _declaration(table: ConstructorTable, tab: ApiTab) -> tuple[str, Declaration] | None:
    try:
        return declaration_for(table, tab)
    except DeclarationError as error:
        log.error("pb_headless: constructor table '%s' is not published: %s", table.name, error)
        return None


async def _is_in_database(database: Database, table: ConstructorTable, declaration: Declaration) -> bool:
    """Whether the SQL table has every defined column, so a definition ahead of its table cannot 500."""
    assert declaration.table is not None
    try:
        await database.fetch_all(sa.select(*declaration.table.c).limit(0))
    except Exception as error:
        # When the database itself does not answer, fail the build (retried on the next request)
        # instead of caching the table as unpublished for this whole version.
        await database.fetch_val("SELECT 1")
        log.error(
            "pb_headless: constructor table '%s' is not published: its SQL table does not match its "
            "definition (%s); create or alter it",
            table.name,
            type(error).__name__,
        )
        return False
    return True
