"""docs/caching.md, "What a 304 costs": a list's ETag taken from the change log, before the page is read."""

from __future__ import annotations

import pytest

from pb_headless import ApiRegistry
from pb_headless.changes import ChangeLog
from pb_headless.http.conditional import entity_tag
from tests.support.demo import DECLARATIONS, articles, demo_registry

API = "/api/pb/v1/objects"


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.*,authors.read"))
    return demo


async def _tag(host, path: str) -> str:
    response = await host.client.get(f"{API}/{path}", headers=host.headers)
    assert response.status_code == 200, response.text
    return response.headers["etag"]


async def _revalidated(host, path: str, tag: str) -> int:
    response = await host.client.get(f"{API}/{path}", headers={**host.headers, "If-None-Match": tag})
    return response.status_code


async def test_a_list_tag_comes_from_the_change_log_and_a_show_tag_from_the_body(reader):
    listed = await reader.client.get(f"{API}/articles", headers=reader.headers)
    shown = await reader.client.get(f"{API}/articles/1", headers=reader.headers)
    assert listed.headers["etag"] != entity_tag(listed.content)
    assert shown.headers["etag"] == entity_tag(shown.content)


async def test_a_row_changed_in_plain_sql_changes_the_list_tag(reader):
    tag = await _tag(reader, "articles")
    assert await _revalidated(reader, "articles", tag) == 304
    await reader.database.execute("UPDATE demo_articles SET views = 4321 WHERE id = 2")
    assert await _revalidated(reader, "articles", tag) == 200
    changed = await _tag(reader, "articles")
    assert changed != tag
    assert await _revalidated(reader, "articles", changed) == 304


async def test_a_row_added_in_plain_sql_is_in_the_total_at_once(reader):
    before = await reader.client.get(f"{API}/articles?limit=2", headers=reader.headers)
    await reader.database.execute(
        "INSERT INTO demo_articles (id, title, published) VALUES (40, 'Plain', true)"
    )
    after = await reader.client.get(f"{API}/articles?limit=2", headers=reader.headers)
    assert after.json()["meta"]["total"] == before.json()["meta"]["total"] + 1
    assert after.headers["etag"] != before.headers["etag"]


async def test_a_change_to_a_shown_relation_changes_the_tag_of_a_list_that_shows_it(reader):
    path = "articles?with=author&limit=2"
    tag, plain = await _tag(reader, path), await _tag(reader, "articles?limit=2")
    await reader.database.execute("UPDATE demo_authors SET name = 'Anna Maria' WHERE id = 1")
    assert await _revalidated(reader, path, tag) == 200
    assert await _tag(reader, path) != tag
    assert await _tag(reader, "articles?limit=2") == plain  # a list that does not show authors


async def test_two_instances_derive_the_same_tag_and_answer_the_same_304(reader, host_factory):
    other = await host_factory(reader.database, demo_registry())
    other.headers = reader.headers
    for path in ("articles", "articles?sort=-views&limit=3&with=author", "articles?count=none"):
        tag = await _tag(reader, path)
        assert await _tag(other, path) == tag
        assert await _revalidated(other, path, tag) == 304


async def test_another_token_or_address_gets_another_tag(reader):
    other = reader.auth(await reader.token("articles.read"))
    mine = await _tag(reader, "articles")
    theirs = await reader.client.get(f"{API}/articles", headers=other)
    assert theirs.headers["etag"] != mine
    assert (
        await _tag(reader, "articles?limit=5") != mine
    )  # the same page, written otherwise: its links differ


async def test_a_304_from_the_change_log_reads_no_row_of_the_page(reader):
    # With the triggers gone (as a host that drops them by hand would), a change reaches no log:
    # the revalidation still answers 304, which it could not if it had read the rows.
    tag = await _tag(reader, "articles")
    await ChangeLog.of(reader.database).sync_triggers({})
    await reader.database.execute("UPDATE demo_articles SET title = 'Unlogged' WHERE id = 1")
    assert await _revalidated(reader, "articles", tag) == 304


async def test_lists_the_log_cannot_vouch_for_keep_the_digest_of_their_body(reader):
    # `comments` is no object's table (no triggers); `estimated` moves with the database's statistics.
    for path in ("articles?with=comments", "articles?count=estimated"):
        response = await reader.client.get(f"{API}/{path}", headers=reader.headers)
        assert response.headers["etag"] == entity_tag(response.content), path
        assert await _revalidated(reader, path, response.headers["etag"]) == 304


async def test_without_the_change_log_a_list_tag_is_the_digest_of_its_body(demo, host_factory):
    host = await host_factory(demo.database, demo_registry(), change_log=False)
    host.headers = host.auth(await host.token("articles.read"))
    response = await host.client.get(f"{API}/articles", headers=host.headers)
    assert response.headers["etag"] == entity_tag(response.content)
    await host.database.execute("UPDATE demo_articles SET views = 77 WHERE id = 3")
    assert await _revalidated(host, "articles", response.headers["etag"]) == 200


async def test_an_object_narrowed_by_a_query_keeps_the_digest_of_its_body(demo, host_factory):
    registry = ApiRegistry()
    news = {**DECLARATIONS["articles"], "query": lambda select: select.where(articles.c.category == "news")}
    registry.register("articles", news)
    host = await host_factory(demo.database, registry)
    host.headers = host.auth(await host.token("articles.read"))
    response = await host.client.get(f"{API}/articles", headers=host.headers)
    assert response.status_code == 200, response.text
    assert response.headers["etag"] == entity_tag(response.content)


async def test_a_table_whose_log_entries_were_pruned_keeps_its_tag_and_never_gets_an_old_one(reader):
    first = await _tag(reader, "articles")
    await reader.database.execute("UPDATE demo_articles SET views = 1 WHERE id = 1")
    second = await _tag(reader, "articles")
    assert await ChangeLog.of(reader.database).prune(-1) > 0  # every entry goes: the table has none left
    assert await _tag(reader, "articles") == second  # nothing changed since: the same tag
    assert second != first
    assert await _revalidated(reader, "articles", first) == 200
