"""docs/query.md "Cursors" and "Count control": keyset pages by `after`/`before`, and `count=`.

The demo publishes six articles (1, 2, 3, 4, 6, 7); article 4 has no price and no views, article 7
no publication date, so the sorts below meet NULLs.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pb_headless.query import estimates
from tests.support.demo import articles

API = "/api/pb/v1/objects"
SORTS = ["", "sort=-views", "sort=price,-id", "sort=-published_on,title", "sort=views&filter[category]=news"]


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.*"))
    return demo


async def listing(host, query: str, status: int = 200) -> dict:
    response = await host.client.get(f"{API}/articles?{query}", headers=host.headers)
    assert response.status_code == status, response.text
    return response.json()


def ids(body: dict) -> list[int]:
    return [record["id"] for record in body["data"]]


async def walk(host, query: str, limit: int, direction: str = "next") -> list[int]:
    """Every id met following the cursors one way from the list's first (or last) page."""
    body = await listing(host, f"{query}&limit={limit}")
    if direction == "prev":  # start from the end: the position after the last row, read backwards
        while body["meta"]["next_cursor"] is not None:
            body = await listing(host, f"{query}&limit={limit}&after={body['meta']['next_cursor']}")
    seen = ids(body)
    cursor_name, parameter = ("next_cursor", "after") if direction == "next" else ("prev_cursor", "before")
    while (cursor := body["meta"][cursor_name]) is not None:
        body = await listing(host, f"{query}&limit={limit}&{parameter}={cursor}")
        seen = seen + ids(body) if direction == "next" else ids(body) + seen
    return seen


@pytest.mark.parametrize("query", SORTS)
async def test_walking_the_cursors_visits_every_record_once_in_the_order_of_offset_pages(reader, query):
    everything = ids(await listing(reader, f"{query}&limit=6"))
    for limit in (1, 2, 4):
        assert await walk(reader, query, limit) == everything
        assert await walk(reader, query, limit, direction="prev") == everything


async def test_a_cursor_page_has_cursor_links_and_no_offset(reader):
    first = await listing(reader, "sort=-views&limit=2&fields=title")
    assert first["meta"]["prev_cursor"] is None and first["meta"]["next_cursor"]
    second = await listing(reader, f"sort=-views&limit=2&fields=title&after={first['meta']['next_cursor']}")
    assert second["meta"]["offset"] is None and second["meta"]["total"] == 6
    assert second["meta"]["has_more"] is True
    kept = "sort=-views&limit=2&fields=title"
    assert second["links"]["next"].endswith(f"{kept}&after={second['meta']['next_cursor']}")
    assert second["links"]["prev"].endswith(f"{kept}&before={second['meta']['prev_cursor']}")
    back = await listing(reader, second["links"]["prev"].split("?", 1)[1])
    assert ids(back) == ids(first)


async def test_offset_and_page_beside_a_cursor_are_ignored_and_named(reader):
    first = await listing(reader, "limit=2")
    cursor = first["meta"]["next_cursor"]
    body = await listing(reader, f"limit=2&offset=4&page=3&after={cursor}")
    assert ids(body) == [3, 4]
    assert body["meta"]["ignored"] == ["offset=4", "page=3"]


async def test_the_last_cursor_page_has_no_next_cursor(reader):
    first = await listing(reader, "limit=4")
    last = await listing(reader, f"limit=4&after={first['meta']['next_cursor']}")
    assert ids(last) == [6, 7]
    assert last["meta"]["next_cursor"] is None and last["meta"]["has_more"] is False
    assert last["links"]["next"] is None


@pytest.mark.parametrize(
    "query",
    [
        "after=nonsense",
        "after=WzEsIngiLFsiMSJdXQ",  # well-formed, made for no list of this API
        "before=" + "A" * 5000,
    ],
)
async def test_a_cursor_that_does_not_decode_is_a_422_keyed_by_its_parameter(reader, query):
    body = await listing(reader, query, status=422)
    assert body["error"] == "validation_failed"
    assert list(body["details"]) == [query.split("=")[0]]


@pytest.mark.parametrize("other", ["sort=-views", "filter[category]=news", "search=hello", "sort=title"])
async def test_a_cursor_made_for_another_sort_filter_or_search_is_refused(reader, other):
    cursor = (await listing(reader, "limit=2"))["meta"]["next_cursor"]
    body = await listing(reader, f"{other}&after={cursor}", status=422)
    assert "after" in body["details"]


async def test_after_and_before_together_are_refused(reader):
    cursor = (await listing(reader, "limit=2"))["meta"]["next_cursor"]
    body = await listing(reader, f"after={cursor}&before={cursor}", status=422)
    assert "before" in body["details"]


async def test_rows_that_exist_throughout_are_visited_exactly_once_while_others_come_and_go(reader):
    created = []
    for number in range(12):
        body = {"title": f"walk {number:02}"}
        answer = await reader.client.post(f"{API}/articles", json=body, headers=reader.headers)
        created.append(answer.json()["data"]["id"])
    throughout = set(ids(await listing(reader, "limit=6"))) | set(created)
    body = await listing(reader, "sort=-title&limit=3")
    seen, step = ids(body), 0
    while body["meta"]["next_cursor"] is not None:
        step += 1
        # Between two pages: a new row sorts before, another after the position; one row goes away.
        for title in (f"aaa {step}", f"zzz {step}"):
            await reader.client.post(f"{API}/articles", json={"title": title}, headers=reader.headers)
        gone = created.pop()
        throughout.discard(gone)
        await reader.client.delete(f"{API}/articles/{gone}", headers=reader.headers)
        body = await listing(reader, f"sort=-title&limit=3&after={body['meta']['next_cursor']}")
        seen += ids(body)
    assert len(seen) == len(set(seen))
    assert throughout <= set(seen)


async def test_count_none_gives_no_total_and_an_exact_has_more(reader):
    body = await listing(reader, "count=none&limit=5")
    assert body["meta"]["total"] is None and body["meta"]["has_more"] is True
    rest = await listing(reader, "count=none&limit=5&offset=5")
    assert rest["meta"]["total"] is None and rest["meta"]["has_more"] is False and ids(rest) == [7]
    exactly = await listing(reader, "count=none&limit=6")
    assert exactly["meta"]["has_more"] is False and exactly["meta"]["next_cursor"] is None


async def test_count_estimated_is_exact_on_a_small_table(reader):
    body = await listing(reader, "count=estimated&limit=2")
    assert body["meta"]["total"] == 6 and "total_estimated" not in body["meta"]
    assert body["meta"]["has_more"] is True


async def test_an_unknown_count_value_is_ignored_and_named(reader):
    body = await listing(reader, "count=maybe")
    assert body["meta"]["total"] == 6 and body["meta"]["ignored"] == ["count=maybe"]


async def test_count_estimated_on_a_large_table_is_the_database_estimate(reader, monkeypatch):
    # Every table counts as large: PostgreSQL and MariaDB answer from their statistics, SQLite counts.
    monkeypatch.setattr(estimates, "EXACT_BELOW", 0)
    dialect = reader.database.url.dialect
    if dialect == "postgresql":
        await reader.database.execute(f"ANALYZE {articles.name}")
    body = await listing(reader, "count=estimated&limit=2")
    assert isinstance(body["meta"]["total"], int) and body["meta"]["has_more"] is True
    if dialect == "sqlite":
        assert body["meta"]["total"] == 6 and "total_estimated" not in body["meta"]
    else:
        assert body["meta"]["total_estimated"] is True
    assert await reader.database.fetch_val(sa.select(sa.func.count()).select_from(articles)) == 7


def _cursor_statements(host) -> list:
    return [key for key in host.api.caches.statements._entries if key[1][0] == "cursor"]


@pytest.mark.parametrize("query", SORTS)
async def test_cursor_pages_of_one_shape_run_one_compiled_statement(reader, query):
    # Walking visits positions with and without NULLs: one statement per direction and NULL pattern,
    # each compiled once and run again with the next position's values (the walk checks they are right).
    everything = ids(await listing(reader, f"{query}&limit=6"))
    assert await walk(reader, query, 1) == everything
    compiled = _cursor_statements(reader)
    assert 0 < len(compiled) <= 4
    assert await walk(reader, query, 1) == everything
    assert await walk(reader, query, 1, "prev") == everything
    assert set(compiled) <= set(_cursor_statements(reader))  # the forward walk compiled nothing new
    assert len(_cursor_statements(reader)) <= 8
