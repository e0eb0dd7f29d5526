"""docs/caching.md, "Answers kept by their tag": a list asked again at the same change-log positions is
answered from the instance's memory, without reading its page; any write to a table it reads, through
the API or in plain SQL, is in the next answer; only tagged lists are kept, within their bounds."""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry
from pb_headless.api import reads
from pb_headless.database import caches
from pb_headless.query import executor
from tests.support.demo import DECLARATIONS, articles, authors

API = "/api/pb/v1/objects"


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.*,authors.read"))
    return demo


def calls_of(monkeypatch, owner, name: str) -> dict[str, int]:
    """`calls["count"]`: how many times the coroutine function `owner.name` was called."""
    calls = {"count": 0}
    original = getattr(owner, name)

    async def counted(*args, **kwargs):
        calls["count"] += 1
        return await original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.fixture
def pages_read(monkeypatch):
    """How many pages the list endpoint read from the database."""
    return calls_of(monkeypatch, reads, "fetch_page")


@pytest.fixture
def counts_run(monkeypatch):
    """How many counts of `meta.total` the database ran."""
    return calls_of(monkeypatch, executor, "_count_prepared")


async def test_a_write_to_another_table_leaves_a_lists_kept_count_standing(reader, counts_run):
    """docs/performance.md ("What is not there yet"): a tagged list keeps its total with the positions
    of the tables it reads, not with a version every commit moves."""
    first = await reader.client.get(f"{API}/articles?limit=2", headers=reader.headers)
    assert first.status_code == 200 and counts_run["count"] == 1, first.text
    total = first.json()["meta"]["total"]
    await reader.database.execute(authors.update().where(authors.c.id == 1).values(name="Renamed"))
    second = await reader.client.get(f"{API}/articles?limit=2&offset=2", headers=reader.headers)
    assert second.json()["meta"]["total"] == total
    assert counts_run["count"] == 1  # another page, the same count: not taken again
    await reader.database.execute(articles.insert().values(title="Counted again", published=True))
    third = await reader.client.get(f"{API}/articles?limit=2&offset=4", headers=reader.headers)
    assert third.json()["meta"]["total"] == total + 1
    assert counts_run["count"] == 2


async def test_the_same_list_at_the_same_positions_is_answered_without_reading_its_page(reader, pages_read):
    path = f"{API}/articles?sort=-views&limit=3&with=author"
    first = await reader.client.get(path, headers=reader.headers)
    again = await reader.client.get(path, headers=reader.headers)
    assert first.status_code == again.status_code == 200, again.text
    assert pages_read["count"] == 1
    assert again.content == first.content
    assert again.headers["etag"] == first.headers["etag"]
    moving = {"date", "x-ratelimit-remaining", "x-ratelimit-reset"}
    assert [(k, v) for k, v in again.headers.items() if k not in moving] == [
        (k, v) for k, v in first.headers.items() if k not in moving
    ]
    revalidated = await reader.client.get(
        path, headers={**reader.headers, "If-None-Match": first.headers["etag"]}
    )
    assert revalidated.status_code == 304


async def test_a_write_through_the_api_is_in_the_next_answer(reader, pages_read):
    path = f"{API}/articles?sort=-id&limit=6"
    before = await reader.client.get(path, headers=reader.headers)
    created = await reader.client.post(
        f"{API}/articles", json={"title": "Kept no longer"}, headers=reader.headers
    )
    assert created.status_code == 201, created.text
    after = await reader.client.get(path, headers=reader.headers)
    assert pages_read["count"] == 2
    assert after.json()["meta"]["total"] == before.json()["meta"]["total"] + 1
    assert "Kept no longer" in [record["title"] for record in after.json()["data"]]
    assert reader.api.caches.sizes()["lists"] == 1  # the newer answer replaced the older one


async def test_a_row_changed_in_plain_sql_is_in_the_next_answer(reader):
    path = f"{API}/articles?sort=id&limit=3"
    before = await reader.client.get(path, headers=reader.headers)
    assert before.json()["data"][1]["views"] != 4321
    await reader.database.execute("UPDATE demo_articles SET views = 4321 WHERE id = 2")
    after = await reader.client.get(path, headers=reader.headers)
    assert after.json()["data"][1]["views"] == 4321
    assert after.headers["etag"] != before.headers["etag"]


async def test_a_change_to_a_shown_relation_is_in_the_next_answer_of_a_list_that_shows_it(reader):
    path = f"{API}/articles?with=author&sort=id&limit=2"
    before = await reader.client.get(path, headers=reader.headers)
    assert before.json()["data"][0]["author"]["name"] != "Anna Maria"
    await reader.database.execute("UPDATE demo_authors SET name = 'Anna Maria' WHERE id = 1")
    after = await reader.client.get(path, headers=reader.headers)
    assert after.json()["data"][0]["author"]["name"] == "Anna Maria"


async def test_each_token_gets_the_answer_kept_for_its_own_tag(reader):
    other = reader.auth(await reader.token("articles.read"))
    path = f"{API}/articles?limit=2"
    mine = await reader.client.get(path, headers=reader.headers)
    theirs = await reader.client.get(path, headers=other)
    assert mine.headers["etag"] != theirs.headers["etag"]
    assert reader.api.caches.sizes()["lists"] == 2
    again = await reader.client.get(path, headers=other)
    assert again.headers["etag"] == theirs.headers["etag"]
    assert again.content == theirs.content


async def test_lists_without_a_tag_from_the_change_log_are_never_kept(demo, host_factory, pages_read):
    registry = ApiRegistry()
    news = {**DECLARATIONS["articles"], "query": lambda select: select.where(articles.c.id > 0)}
    registry.register("articles", news)
    host = await host_factory(demo.database, registry)
    headers = host.auth(await host.token("articles.read"))
    for path in ("articles", "articles", "articles?count=estimated"):
        response = await host.client.get(f"{API}/{path}", headers=headers)
        assert response.status_code == 200, response.text
    assert pages_read["count"] == 3
    assert host.api.caches.sizes()["lists"] == 0


async def test_kept_answers_stay_within_their_count_and_bytes(sqlite_database, host_factory):
    from tests.support.demo import create_demo, demo_registry

    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry(), rate_limit=10**9)
    headers = host.auth(await host.token("articles.read"))
    for offset in range(caches.KEPT_LISTS + 20):
        response = await host.client.get(f"{API}/articles?limit=1&offset={offset}", headers=headers)
        assert response.status_code == 200, response.text
    sizes = host.api.caches.sizes()
    assert sizes["lists"] == caches.KEPT_LISTS
    assert 0 < sizes["list_bytes"] <= caches.KEPT_LIST_BYTES
