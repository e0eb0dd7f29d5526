"""Deep pages in key order on SQLite start from remembered keys (pb_headless/database/sqlite/positions.py,
docs/performance.md "Deep pages"): every page is the one the whole table gives at that offset, in both
directions, with filters, past the end, and after writes made by the API or by another program."""

from __future__ import annotations

import sqlite3

import pytest

from pb_headless.constructor import (
    ApiTab,
    ConstructorField,
    ConstructorTable,
)
from pb_headless.database.sqlite import positions
from tests.support.constructor import constructor_host

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
async def site(sqlite_database, host_factory):
    rows = [{"name": f"item {n}", "rank": n % 7, "published": n % 10 != 3} for n in range(1, ROWS + 1)]
    return await constructor_host(sqlite_database, host_factory, ITEMS, TAB, rows)


async def published_ids(site, where="1 = 1", descending=False):
    order = "DESC" if descending else "ASC"
    query = f"SELECT id FROM items WHERE published AND {where} ORDER BY id {order}"
    return [row[0] for row in await site.database.fetch_all(query)]


async def page(site, query):
    response = await site.client.get(f"{URL}?{query}", headers=site.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    return [record["id"] for record in body["data"]], body["meta"]["total"]


@pytest.mark.parametrize("offset", [1000, 1999, 2000, 3333, 4949, 4950, 4955, 6000])
async def test_deep_pages_are_the_pages_of_the_whole_table(site, offset):
    ids = await published_ids(site)
    for _ in range(2):  # the first request notes the keys, the second starts from them
        found, total = await page(site, f"limit=7&offset={offset}")
        assert found == ids[offset : offset + 7]
        assert total == len(ids)
    backwards = (await published_ids(site, descending=True))[offset : offset + 7]
    assert (await page(site, f"limit=7&offset={offset}&sort=-id"))[0] == backwards


async def test_with_a_filter_each_filter_has_its_own_keys(site):
    for rank in (2, 5):
        ids = await published_ids(site, f"rank = {rank}")
        for offset in (1000, 600, 1100, 500):
            assert (
                await page(site, f"filter[rank][gte]={rank}&filter[rank][lte]={rank}&limit=5&offset={offset}")
            )[0] == ids[offset : offset + 5]
    ids = await published_ids(site, "rank >= 1")
    assert (await page(site, "filter[rank][gte]=1&limit=5&offset=4000"))[0] == ids[4000:4005]


async def test_writes_between_requests_are_seen(site):
    assert (await page(site, "limit=5&offset=3000"))[0] == (await published_ids(site))[3000:3005]
    other = sqlite3.connect(site.database.url.database, isolation_level=None)
    try:
        other.execute("DELETE FROM items WHERE id BETWEEN 100 AND 120")
        other.execute("UPDATE items SET published = 1 WHERE id = 2003")
    finally:
        other.close()
    assert (await page(site, "limit=5&offset=3000"))[0] == (await published_ids(site))[3000:3005]
    first = (await site.client.get(f"{URL}?limit=1", headers=site.headers)).json()["data"][0]["id"]
    deleted = await site.client.delete(f"{URL}/{first}", headers=site.headers)
    assert deleted.status_code == 204
    assert (await page(site, "limit=5&offset=3000"))[0] == (await published_ids(site))[3000:3005]
    created = await site.client.post(URL, headers=site.headers, json={"name": "new", "rank": 1})
    assert created.status_code == 201
    found, total = await page(site, "limit=5&offset=4945")
    ids = await published_ids(site)
    assert found == ids[4945:4950] and total == len(ids)


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
    assert steps == [4, 0, 0]  # four keys (rows 999, 1999, 2999, 3999) noted once, then reused
