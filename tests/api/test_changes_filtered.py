"""docs/changes.md, "Filtered changes": the feed takes a list's `filter[...]` and `search`. A row the
filters select now comes as `upsert`; any other changed row (it left the selection, was unpublished
or deleted) as `delete` with `record: null`; a cursor is good only for the filter set it was made for."""

from __future__ import annotations

import httpx
import pytest

from tests.support.demo import articles
from tests.support.live import event_stream, serving
from tests.support.relation_filters import create_schema, posts, relation_registry

API = "/api/pb/v1"
STREAM = f"{API}/changes/articles/stream"
NEWS = {"filter[category]": "news"}


@pytest.fixture
async def feed(demo):
    demo.headers = demo.auth(await demo.token("articles.read,articles.write"))
    return demo


async def changes(host, name: str = "articles", status: int = 200, **params) -> dict:
    response = await host.client.get(f"{API}/changes/{name}", params=params, headers=host.headers)
    assert response.status_code == status, response.text
    return response.json()


async def now(host, name: str = "articles", **params) -> str:
    return (await changes(host, name, **params))["meta"]["next"]


async def follow(host, since: str, name: str = "articles", **params) -> dict:
    """Every entry after `since`, page after page, as one answer."""
    data: list[dict] = []
    while True:
        body = await changes(host, name, since=since, **params)
        data += body["data"]
        since = body["meta"]["next"]
        if not body["meta"]["has_more"]:
            return {"data": data, "meta": body["meta"]}


def ops(body: dict) -> list[tuple[str, int, object]]:
    return [(entry["op"], entry["id"], entry["record"]) for entry in body["data"]]


async def update(host, key: int, **values) -> None:
    await host.database.execute(articles.update().where(articles.c.id == key).values(**values))


async def test_selected_rows_come_as_upsert_and_every_other_changed_row_as_delete(feed):
    start = await now(feed, **NEWS)
    await update(feed, 1, views=11)  # news, still news
    await update(feed, 6, category="company")  # news, left the selection
    await update(feed, 7, published=False)  # news, unpublished
    await feed.database.execute(
        articles.insert().values(id=60, title="Fresh", category="news", published=True)
    )
    await update(feed, 2, category="news")  # company, entered the selection
    await feed.database.execute(
        articles.insert().values(id=61, title="Not news", category="sales", published=True)
    )
    deleted = await feed.client.delete(f"{API}/objects/articles/3", headers=feed.headers)
    assert deleted.status_code == 204, deleted.text
    body = await follow(feed, start, fields="title,views", **NEWS)
    assert ops(body) == [
        ("upsert", 1, {"id": 1, "title": "Hello world", "views": 11}),
        ("delete", 6, None),
        ("delete", 7, None),
        ("upsert", 60, {"id": 60, "title": "Fresh", "views": None}),
        ("upsert", 2, {"id": 2, "title": "Новости компании", "views": 20}),
        ("delete", 3, None),  # a sales article: never selected, a delete the client ignores
    ]  # 61, created since the cursor and never selected, is no entry: the client cannot hold it
    shown = await feed.client.get(f"{API}/objects/articles/1?fields=title,views", headers=feed.headers)
    assert body["data"][0]["record"] == shown.json()["data"]
    assert "ignored" not in body["meta"]
    unfiltered = await follow(feed, start.partition(".")[0])
    assert [entry["id"] for entry in unfiltered["data"]] == [1, 6, 7, 60, 2, 61, 3]
    assert [entry["op"] for entry in unfiltered["data"]].count("delete") == 2  # 7 unpublished, 3 deleted


async def test_a_row_that_never_matched_and_changed_elsewhere_has_no_entry(feed):
    """The log records which columns an update changed: a row the filters did not select at the cursor
    and do not select now, whose changes left the filtered columns alone, cannot be held by the client
    (docs/changes.md, "Filtered changes")."""
    start = await now(feed, **NEWS)
    await update(feed, 2, views=21)  # company, never news: one change
    await update(feed, 4, title="Retitled")  # sales: two changes
    await update(feed, 4, views=41)
    await update(feed, 3, category="company")  # sales → company: a filtered column changed
    await update(feed, 6, views=61)  # news, an unfiltered column: still selected
    body = await follow(feed, start, fields="views", **NEWS)
    assert ops(body) == [("delete", 3, None), ("upsert", 6, {"id": 6, "views": 61})]
    searched = {"search": "Retitled", **NEWS}
    start = await now(feed, **searched)
    await update(feed, 4, views=42)  # not news: the searched title untouched
    await update(feed, 2, title="Retitled too")  # not news either, but a searched column changed
    assert ops(await follow(feed, start, fields="views", **searched)) == [("delete", 2, None)]


async def test_pages_resume_from_their_cursor_with_nothing_lost_or_twice(feed):
    start = await now(feed, **NEWS)
    for key in (7, 6, 2, 1, 4, 3):
        await update(feed, key, views=key + 100)
    await update(feed, 6, category="sales")
    seen, cursor = [], start
    while True:
        body = await changes(feed, since=cursor, limit="2", **NEWS)
        assert all(entry["cursor"].endswith(start[-9:]) for entry in body["data"])
        seen += [(entry["op"], entry["id"]) for entry in body["data"]]
        cursor = body["meta"]["next"]
        if not body["meta"]["has_more"]:
            break
    # 2, 4 and 3 were never news and only their views changed: no entry (the client cannot hold them).
    assert seen == [("upsert", 7), ("upsert", 1), ("delete", 6)]
    assert (await changes(feed, since=cursor, **NEWS))["data"] == []


async def test_search_combines_with_the_filters_as_on_a_list(feed):
    query = {**NEWS, "search": "hello"}
    start = await now(feed, **query)
    for key in (1, 6, 7):  # 1 and 7 are news with "hello" in the title; 6 is news without it
        await update(feed, key, views=key)
    await update(feed, 6, title="Hello again")
    body = await changes(feed, since=start, fields="title", **query)
    assert ops(body) == [
        ("upsert", 1, {"id": 1, "title": "Hello world"}),
        ("upsert", 7, {"id": 7, "title": "Second hello"}),
        ("upsert", 6, {"id": 6, "title": "Hello again"}),
    ]
    listed = await feed.client.get(
        f"{API}/objects/articles", params={**query, "fields": "id"}, headers=feed.headers
    )
    assert sorted(record["id"] for record in listed.json()["data"]) == [1, 6, 7]


async def test_a_cursor_is_good_only_for_the_filter_set_it_was_made_for(feed):
    news = await now(feed, **NEWS)
    same = await now(feed, **{"filter[category][eq]": "news"})
    assert same == news  # the same filter set however written
    for since, params in (
        (news, {"filter[category]": "company"}),
        (news, {}),
        (news, {**NEWS, "search": "hello"}),
        (await now(feed), NEWS),
    ):
        body = await changes(feed, status=422, since=since, **params)
        assert body["error"] == "validation_failed" and list(body["details"]) == ["since"]
    assert (await changes(feed, since=news, **{"filter[category][eq]": "news"}))["data"] == []


async def test_filters_are_checked_and_ignored_as_on_a_list(feed):
    bad = await changes(feed, status=422, **{"filter[views]": "many"})
    assert bad["error"] == "validation_failed" and list(bad["details"]) == ["filter[views]"]
    start = await now(feed, **{"filter[secret]": "x"})
    await update(feed, 4, views=4)
    body = await changes(feed, since=start, **{"filter[secret]": "x"})
    assert body["meta"]["ignored"] == ["filter[secret]"] and ops(body)[0][0] == "upsert"
    assert "." not in start  # an ignored filter selects nothing: the cursor is the unfiltered one
    strict = await feed.client.get(
        f"{API}/changes/articles",
        params={"filter[secret]": "x"},
        headers={**feed.headers, "Prefer": "handling=strict"},
    )
    assert strict.status_code == 400, strict.text


async def test_a_relation_path_selects_as_on_a_list(database, host_factory):
    await create_schema(database)
    host = await host_factory(database, relation_registry())
    host.headers = host.auth(await host.token("posts.read"))
    by_ann = {"filter[author.name]": "Ann"}
    start = await now(host, "posts", **by_ann)
    await database.execute(posts.update().where(posts.c.id == 2).values(author_id=1))  # to Ann
    await database.execute(posts.update().where(posts.c.id == 6).values(author_id=2))  # away from Ann
    await database.execute(posts.update().where(posts.c.id == 1).values(title="Alpha 2"))  # still Ann's
    body = await changes(host, "posts", since=start, fields="title", **by_ann)
    assert ops(body) == [
        ("upsert", 2, {"id": 2, "title": "Beta"}),
        ("delete", 6, None),
        ("upsert", 1, {"id": 1, "title": "Alpha 2"}),
    ]


@pytest.fixture
async def live(feed):
    async with serving(feed.app) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        feed.http = client
        yield feed


async def test_the_stream_sends_upserts_and_leaves_and_resumes_with_last_event_id(live):
    stream = f"{STREAM}?filter[category]=news&fields=title"
    async with event_stream(live.http, stream, live.headers) as events:
        await events.opened()
        await update(live, 1, title="Still news")
        await update(live, 6, category="sales")
        sale = {"id": 62, "title": "Sale", "category": "sales", "published": True}
        await live.database.execute(articles.insert().values(**sale))  # new, not selected: no event
        await update(live, 4, category="news")
        first = await events.take(3)
    assert [(event.event, event.data["id"], event.data["record"]) for event in first] == [
        ("upsert", 1, {"id": 1, "title": "Still news"}),
        ("delete", 6, None),
        ("upsert", 4, {"id": 4, "title": "Quarterly report"}),
    ]
    assert all(event.id == event.data["cursor"] and "." in event.id for event in first)
    await update(live, 7, published=False)  # while no client listens
    await update(live, 2, category="news")
    resumed = {**live.headers, "Last-Event-ID": first[-1].id}
    async with event_stream(live.http, stream, resumed) as events:
        rest = await events.take(2)
    assert [(event.event, event.data["id"]) for event in rest] == [("delete", 7), ("upsert", 2)]
    other = await live.http.get(f"{STREAM}?filter[category]=sales", headers=resumed)
    assert other.status_code == 422 and list(other.json()["details"]) == ["Last-Event-ID"]
