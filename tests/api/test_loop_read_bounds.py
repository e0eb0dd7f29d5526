"""A read on the event loop's thread is bounded by what it returns, not only by its steps (issue 26.4;
docs/performance.md, "Reads on the loop").

Copying a long row out of SQLite is one step the clock cannot interrupt: a page of 200,000-character
rows once held the loop for tens of ms, and every other client (`/health` included) waited. Such
reads are handed to the connection's thread once they pass `INLINE_BYTES`, and a page that tests
text (search, `like`) is never read on the loop at all. Asserted by where each read ran, not by time.
"""

from __future__ import annotations

import pytest

from pb_headless.constructor import ApiTab, ConstructorField, ConstructorTable
from pb_headless.database.accelerators import accelerator_of
from tests.support.constructor import constructor_host

PAGES = ConstructorTable(
    "pages",
    "Pages",
    (
        ConstructorField("title", "string", searchable=True, length=100),
        ConstructorField("body", "text", searchable=True),
        ConstructorField("rank", "integer"),
    ),
)
TAB = ApiTab(
    enabled=True,
    fields=("title", "body", "rank"),
    operations=("list", "show"),
    filterable=("rank", "title"),
    sortable=("rank",),
)
URL = "/api/pb/v1/objects/pages"
LONG, VERY_LONG = 18_000, 200_000


@pytest.fixture
async def site(sqlite_database, host_factory):
    rows = [{"title": f"short {n}", "body": "x", "rank": n} for n in range(1, 11)]
    rows += [{"title": f"long {n}", "body": "y" * LONG, "rank": 100 + n} for n in range(1, 11)]
    rows += [{"title": "very long", "body": "z" * VERY_LONG, "rank": 1000}]
    return await constructor_host(sqlite_database, host_factory, PAGES, TAB, rows)


@pytest.fixture
def offered(site, monkeypatch):
    """The SQL of every read offered to the loop-thread reader, and what it answered."""
    inline = accelerator_of(site.database).inline
    assert inline is not None
    seen: list[tuple[str, bool]] = []
    fetchall = inline.fetchall

    def recorded(sql, arguments):
        rows = fetchall(sql, arguments)
        seen.append((sql, rows is not None))
        return rows

    monkeypatch.setattr(inline, "fetchall", recorded)
    return seen


async def get(site, query: str) -> dict:
    response = await site.client.get(f"{URL}{query}", headers=site.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_page_of_short_rows_is_read_on_the_loop(site, offered):
    body = await get(site, "?filter[rank][lte]=10&sort=rank&fields=title,body")
    assert [record["title"] for record in body["data"]] == [f"short {n}" for n in range(1, 11)]
    assert offered and all(answered for _, answered in offered)
    assert accelerator_of(site.database).inline.over_size == 0


async def test_a_page_of_long_rows_is_handed_to_the_thread_with_the_same_answer(site, offered):
    body = await get(site, "?filter[rank][gt]=100&filter[rank][lt]=1000&sort=rank&fields=title,body")
    assert [len(record["body"]) for record in body["data"]] == [LONG] * 10
    page = [sql for sql, _ in offered if "body" in sql]
    assert page and not any(answered for sql, answered in offered if "body" in sql)
    inline = accelerator_of(site.database).inline
    assert inline.over_size == 1 and inline.is_over(page[0])  # its next runs go to the thread directly


async def test_one_very_long_record_is_handed_to_the_thread(site, offered):
    found = await get(site, "?filter[rank]=1000&fields=body")
    assert len(found["data"][0]["body"]) == VERY_LONG
    record_id = found["data"][0]["id"]
    shown = await get(site, f"/{record_id}?fields=body")
    assert len(shown["data"]["body"]) == VERY_LONG
    assert accelerator_of(site.database).inline.over_size == 2
    assert not any(answered for sql, answered in offered if "body" in sql)


async def test_a_page_that_tests_text_is_never_offered_to_the_loop(site, offered):
    searched = await get(site, "?search=LONG&sort=rank&fields=rank&limit=20")
    assert [record["rank"] for record in searched["data"]] == [*range(101, 111), 1000]
    liked = await get(site, "?filter[title][like]=short 1&sort=rank&fields=rank")
    assert [record["rank"] for record in liked["data"]] == [1, 10]
    assert offered and not any("LIKE" in sql.upper() or "MATCH" in sql.upper() for sql, _ in offered)
