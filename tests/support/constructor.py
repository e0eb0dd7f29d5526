"""A host serving constructor tables, published as a site's administration area publishes them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from databases import Database

from pb_headless import ApiRegistry
from pb_headless.constructor import (
    ApiTab,
    ApiTabStore,
    ConstructorField,
    ConstructorSource,
    ConstructorTable,
    create_table,
)
from tests.support.host import Host

# A searchable table every operation of which is offered: the SQLite read-path tests' (inline reads,
# thread turns).
SEARCHABLE_NOTES = ConstructorTable(
    "notes",
    "Notes",
    (
        ConstructorField("title", "string", searchable=True, length=100),
        ConstructorField("rank", "integer"),
    ),
)
SEARCHABLE_NOTES_TAB = ApiTab(
    enabled=True,
    fields=("title", "rank"),
    operations=("list", "show", "create", "update", "delete"),
    writable=("title", "rank", "published"),
    filterable=("rank",),
    sortable=("rank",),
)


async def constructor_host(
    database: Database,
    host_factory: Any,
    table: ConstructorTable,
    tab: ApiTab,
    rows: Iterable[Mapping[str, Any]] = (),
    tables: list[ConstructorTable] | None = None,
    **options: Any,
) -> Host:
    """`table` created, holding `rows`, published with `tab` and served; the host's loader gives
    `tables` (default: just `table`) as the list is at each load, so a test may change a definition.
    `host.headers` carries a token with every scope; `options` go to the host (`rate_limit=`...)."""
    created = await create_table(database, table)
    await ApiTabStore(database).save(table.name, tab)
    rows = list(rows)
    if rows:
        await database.execute(created.insert().values(rows))
    loaded = [table] if tables is None else tables
    registry = ApiRegistry()
    registry.add_source(ConstructorSource(lambda _: list(loaded)))
    host = await host_factory(database, registry, **options)
    host.headers = host.auth(await host.token("*"))
    return host
