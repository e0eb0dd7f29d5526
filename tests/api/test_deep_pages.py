"""Deep pages in key order start from noted keys (pb_headless/database/positions.py, docs/performance.md
"Deep pages") on SQLite, PostgreSQL and MariaDB: every page is the one the plain `OFFSET` query gives
over the whole table at that moment, in both directions, with filters, past the end, and after writes
made by the API, by plain SQL on another connection, and with the change log's triggers removed."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator

import pytest
from databases import Database

from pb_headless.changes import ChangeLog
from pb_headless.constructor import (
    ApiTab,
    ConstructorField,
    ConstructorTable,
)
from pb_headless.database import positions
from pb_headless.database.backends import backend_for
from pb_headless.database.dialect import dialect_name
from tests.support.constructor import constructor_host
from tests.support.databases import open_database, until_in_processlist

ITEMS = ConstructorTable(
    "items", "Items", (ConstructorField("name", "string", length=50), ConstructorField("rank", "integer"))
)
TAB = ApiTab(
    enabled=True,
    fields=("name", "rank"),
    operations=("list", "show", "create", "update", "delete"),
    writable=("name", "rank", "published"),
    filterable=("rank",),
    sortable=("id", "rank"),
)
ROWS = 5500
URL = "/api/pb/v1/objects/items"


@pytest.fixture
async def site(database, host_factory):
    rows = [{"name": f"item {n}", "rank": n % 7, "published": n % 10 != 3} for n in range(1, ROWS + 1)]
    return await constructor_host(database, host_factory, ITEMS, TAB, rows)


@pytest.fixture(params=("postgresql", "mariadb"))
async def server_database(request: pytest.FixtureRequest, tmp_path_factory) -> AsyncIterator:
    """PostgreSQL and MariaDB: where the change log's triggers tell whether the rows changed."""
    async with open_database(request.param, tmp_path_factory.mktemp("db")) as db:
        yield db


async def plain_page(site, offset, limit, where="1 = 1", descending=False):
    """The page as the plain `OFFSET` query gives it, on the database's own terms."""
    order = "DESC" if descending else "ASC"
    query = (
        f"SELECT id FROM items WHERE published = TRUE AND {where} ORDER BY id {order} "
        f"LIMIT {limit} OFFSET {offset}"
    )
    return [row[0] for row in await site.database.fetch_all(query)]


async def published_count(site):
    return await site.database.fetch_val("SELECT COUNT(*) FROM items WHERE published = TRUE")


async def page(site, query):
    response = await site.client.get(f"{URL}?{query}", headers=site.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    return [record["id"] for record in body["data"]], body["meta"]["total"]


async def plain_sql(site, *statements):
    """Writes made outside the library: on SQLite by another connection, elsewhere on the database's
    own connection with plain SQL (the change log's triggers see them as they see any writer)."""
    if dialect_name(site.database) != "sqlite":
        for statement in statements:
            await site.database.execute(statement)
        return
    other = sqlite3.connect(site.database.url.database, isolation_level=None)
    try:
        for statement in statements:
            other.execute(statement)
    finally:
        other.close()


@pytest.mark.parametrize("offset", [1000, 1999, 2000, 3333, 4949, 4950, 4955, 6000])
async def test_deep_pages_are_the_pages_of_the_whole_table(site, offset):
    for _ in range(2):  # the first request notes the keys, the second starts from them
        found, total = await page(site, f"limit=7&offset={offset}")
        assert found == await plain_page(site, offset, 7)
        assert total == await published_count(site)
    backwards = await plain_page(site, offset, 7, descending=True)
    assert (await page(site, f"limit=7&offset={offset}&sort=-id"))[0] == backwards


async def test_with_a_filter_each_filter_has_its_own_keys(site):
    rank = _rank(site)
    for value in (2, 5):
        for offset in (1000, 600, 1100, 500):
            query = f"filter[rank][gte]={value}&filter[rank][lte]={value}&limit=5&offset={offset}"
            assert (await page(site, query))[0] == await plain_page(site, offset, 5, f"{rank} = {value}")
    found = await page(site, "filter[rank][gte]=1&limit=5&offset=4000")
    assert found[0] == await plain_page(site, 4000, 5, f"{rank} >= 1")


def _rank(site) -> str:
    """The column `rank`, quoted as the database quotes names."""
    return "`rank`" if dialect_name(site.database) == "mysql" else '"rank"'


async def test_writes_between_requests_are_seen(site):
    assert (await page(site, "limit=5&offset=3000"))[0] == await plain_page(site, 3000, 5)
    await plain_sql(
        site,
        "DELETE FROM items WHERE id BETWEEN 100 AND 120",
        "UPDATE items SET published = TRUE WHERE id = 2003",
    )
    assert (await page(site, "limit=5&offset=3000"))[0] == await plain_page(site, 3000, 5)
    first = (await site.client.get(f"{URL}?limit=1", headers=site.headers)).json()["data"][0]["id"]
    deleted = await site.client.delete(f"{URL}/{first}", headers=site.headers)
    assert deleted.status_code == 204
    assert (await page(site, "limit=5&offset=3000"))[0] == await plain_page(site, 3000, 5)
    created = await site.client.post(URL, headers=site.headers, json={"name": "new", "rank": 1})
    assert created.status_code == 201
    found, total = await page(site, "limit=5&offset=4945")
    assert found == await plain_page(site, 4945, 5) and total == await published_count(site)


async def test_rows_inserted_and_deleted_between_pages(site):
    """Walking the deep pages while rows come and go: each page is the plain query's at that moment."""
    next_id = ROWS + 1
    for round_number in range(6):
        offset = 1000 + 700 * round_number
        for _ in range(2):
            assert (await page(site, f"limit=9&offset={offset}"))[0] == await plain_page(site, offset, 9)
        low = 50 + 90 * round_number
        await plain_sql(
            site,
            f"DELETE FROM items WHERE id BETWEEN {low} AND {low + 4}",
            f"INSERT INTO items (id, name, {_rank(site)}, published) VALUES ({next_id}, 'late', 3, TRUE)",
            f"UPDATE items SET published = FALSE WHERE id = {offset + 5}",
        )
        next_id += 1
        assert (await page(site, f"limit=9&offset={offset}"))[0] == await plain_page(site, offset, 9)
        assert (await page(site, f"limit=9&offset={offset}&sort=-id"))[0] == await plain_page(
            site, offset, 9, descending=True
        )


async def test_the_keys_are_noted_once_and_then_reused(site, monkeypatch):
    steps = []
    note = positions.note_keys

    async def counted(*args, **kwargs):
        noted = args[2]
        before = len(noted.keys)
        await note(*args, **kwargs)
        steps.append(len(noted.keys) - before)

    monkeypatch.setattr(positions, "note_keys", counted)
    await page(site, "limit=5&offset=4500")
    await page(site, "limit=5&offset=4100")
    await page(site, "limit=5&offset=2200")
    assert steps == [4]  # four keys (rows 999, 1999, 2999, 3999) noted once, then reused


async def test_without_the_change_log_triggers_pages_stay_exact(server_database, host_factory):
    """Writes made while the table has no change-log trigger move no head: the keys noted before must
    not be used, neither while the triggers are missing nor after they are made again. (Each request
    is written another way: the same query string at the same positions would be a list answer kept
    by its tag, docs/caching.md, which sees only what the triggers see.)"""
    rows = [{"name": f"item {n}", "rank": n % 7, "published": True} for n in range(1, ROWS + 1)]
    site = await constructor_host(server_database, host_factory, ITEMS, TAB, rows)
    spellings = iter(
        [
            "limit=5&offset=3000",
            "offset=3000&limit=5",
            "limit=5&offset=3000&count=exact",
            "offset=3000&limit=5&count=exact",
            "count=exact&limit=5&offset=3000",
        ]
    )
    for _ in range(2):
        assert (await page(site, next(spellings)))[0] == await plain_page(site, 3000, 5)
    for name in await _trigger_names(site):
        await site.database.execute(_drop_trigger(site, name))
    await site.database.execute("DELETE FROM items WHERE id BETWEEN 10 AND 29")  # unrecorded
    assert (await page(site, next(spellings)))[0] == await plain_page(site, 3000, 5)
    await site.database.execute("DELETE FROM items WHERE id BETWEEN 30 AND 39")  # unrecorded
    await site.api.changes.follow(object(), {"items": "id"}, {})  # the triggers made again
    for _ in range(2):  # the head is where it was: the new triggers' identity tells the keys are old
        assert (await page(site, next(spellings)))[0] == await plain_page(site, 3000, 5)


async def _trigger_names(site) -> list[str]:
    return [name for name, table in (await _present(site.database)).items() if table == "items"]


def _drop_trigger(site, name: str) -> str:
    if dialect_name(site.database) == "postgresql":
        return f'DROP TRIGGER "{name}" ON items'
    return f"DROP TRIGGER `{name}`"


async def _present(database) -> dict[str, str]:
    """The change-log triggers in the database: name → table."""
    return await ChangeLog.of(database).present_triggers()


# -- MariaDB: a table of the same name changing in another database --------------------------------


@contextlib.asynccontextmanager
async def table_being_made(database, table: str, *, schema: str | None = None) -> AsyncIterator[None]:
    """`CREATE TABLE table AS SELECT SLEEP(…)` running on a connection of its own, in `database` or in
    another database `schema` made for it: for as long as it runs, MariaDB holds the table's
    definition exclusively, as any DDL statement does while it works."""
    other = Database(str(database.url))
    await other.connect()
    name = table if schema is None else f"{schema}.{table}"
    try:
        if schema is not None:
            await other.execute(f"CREATE DATABASE {schema}")
        statement = asyncio.ensure_future(other.execute(f"CREATE TABLE {name} AS SELECT SLEEP(3) AS s"))
        running = "info LIKE 'CREATE TABLE %SLEEP(3)%' AND command = 'Query'"
        await until_in_processlist(database, running, "the CREATE TABLE")
        yield
        await statement
    finally:
        await other.execute(f"DROP TABLE {name}" if schema is None else f"DROP DATABASE {schema}")
        await other.disconnect()


async def test_ddl_on_a_table_of_the_same_name_in_another_database_leaves_deep_pages_alone(
    mariadb_database, host_factory
):
    """Read inside a transaction, information_schema skips a table whose definition is changing, with
    a warning; the deep page's version read once looked the table's name up in every database on the
    server, so another site's DDL there made it warn (an error where warnings are errors: a 500)."""
    rows = [{"name": f"item {n}", "rank": n % 7, "published": True} for n in range(1, ROWS + 1)]
    site = await constructor_host(mariadb_database, host_factory, ITEMS, TAB, rows)
    assert (await page(site, "limit=5&offset=3000"))[0] == await plain_page(site, 3000, 5)
    elsewhere = f"{mariadb_database.url.database}_elsewhere"
    async with table_being_made(mariadb_database, "items", schema=elsewhere):
        for offset, limit, extra in ((3000, 5, ""), (3001, 5, ""), (2999, 6, "&count=exact")):
            found = (await page(site, f"offset={offset}&limit={limit}{extra}"))[0]
            assert found == await plain_page(site, offset, limit)


async def test_the_version_of_a_table_being_made_in_its_own_database_is_none_without_a_warning(
    mariadb_database,
):
    """The same skip for the table itself: no deep-page version while its definition changes, and no
    warning raised from the driver (the test session makes every warning an error)."""
    triggers = backend_for(mariadb_database).change_log_triggers
    async with table_being_made(mariadb_database, "being_made"), mariadb_database.transaction():
        await mariadb_database.fetch_val("SELECT COUNT(*) FROM pb_state")  # a lock held, as a request has
        assert await triggers.version("being_made") is None
