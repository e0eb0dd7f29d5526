"""docs/changes.md: `GET /changes/{name}` answers every committed change once per row, through the
object's rules as they are now, whoever wrote it (the API, the site's SQLAlchemy code, plain SQL)."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry
from pb_headless.changes import ChangeLog
from tests.support.demo import DECLARATIONS, articles, authors, demo_registry

API = "/api/pb/v1"


@pytest.fixture
async def feed(demo):
    demo.headers = demo.auth(await demo.token("articles.read,articles.write,authors.read"))
    return demo


async def changes(host, name: str = "articles", since: str | None = None, **params) -> dict:
    query = {**params, **({"since": since} if since is not None else {})}
    response = await host.client.get(f"{API}/changes/{name}", params=query, headers=host.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def now(host, name: str = "articles") -> str:
    return (await changes(host, name))["meta"]["next"]


async def test_without_since_there_are_no_entries_and_next_is_the_cursor_for_now(feed):
    body = await changes(feed)
    assert body["data"] == [] and body["meta"]["has_more"] is False and body["meta"]["count"] == 0
    assert isinstance(body["meta"]["next"], str) and body["meta"]["next"]


async def test_writes_through_the_api_site_code_and_plain_sql_each_come_once(feed):
    start = await now(feed)
    address = f"{API}/objects/articles"
    created = await feed.client.post(address, json={"title": "By the API"}, headers=feed.headers)
    assert created.status_code == 201, created.text
    by_api = created.json()["data"]["id"]
    await feed.database.execute(articles.insert().values(id=50, title="By the site's code", published=True))
    await feed.database.execute(
        "INSERT INTO demo_articles (id, title, published) VALUES (51, 'By plain SQL', TRUE)"
    )
    body = await changes(feed, since=start)
    assert [(entry["op"], entry["id"]) for entry in body["data"]] == [
        ("upsert", by_api),
        ("upsert", 50),
        ("upsert", 51),
    ]
    shown = await feed.client.get(f"{address}/51", headers=feed.headers)
    assert body["data"][2]["record"] == shown.json()["data"]
    assert body["meta"]["count"] == 3 and body["meta"]["has_more"] is False
    assert (await changes(feed, since=body["meta"]["next"]))["data"] == []


async def test_a_row_changed_twice_comes_once_at_its_latest_change(feed):
    start = await now(feed)
    await feed.database.execute(articles.update().where(articles.c.id == 1).values(title="One"))
    await feed.database.execute(articles.update().where(articles.c.id == 2).values(title="Two"))
    await feed.database.execute(articles.update().where(articles.c.id == 1).values(title="One again"))
    body = await changes(feed, since=start)
    assert [entry["id"] for entry in body["data"]] == [2, 1]
    assert body["data"][1]["record"]["title"] == "One again"


async def test_deleted_and_unpublished_rows_come_as_delete_with_no_record(feed):
    start = await now(feed)
    deleted = await feed.client.delete(f"{API}/objects/articles/3", headers=feed.headers)
    assert deleted.status_code == 204, deleted.text
    await feed.database.execute(articles.update().where(articles.c.id == 4).values(published=False))
    body = await changes(feed, since=start)
    assert [(entry["op"], entry["id"], entry["record"]) for entry in body["data"]] == [
        ("delete", 3, None),
        ("delete", 4, None),
    ]


async def test_a_row_leaving_query_comes_as_delete_to_the_object_whose_query_it_left(database, host_factory):
    from tests.support.demo import create_demo

    await create_demo(database)
    registry = demo_registry()
    news = {**DECLARATIONS["articles"], "query": lambda select: select.where(articles.c.category == "news")}
    registry.register("news", news)
    host = await host_factory(database, registry)
    host.headers = host.auth(await host.token("articles.read,news.read"))
    starts = {name: await now(host, name) for name in ("news", "articles")}
    await database.execute(articles.update().where(articles.c.id == 1).values(category="company"))
    assert (await changes(host, "news", since=starts["news"]))["data"][0]["op"] == "delete"
    entry = (await changes(host, "articles", since=starts["articles"]))["data"][0]
    assert entry["op"] == "upsert" and entry["record"]["category"] == "company"


async def test_fields_and_with_shape_the_record_as_on_show(feed):
    start = await now(feed)
    await feed.database.execute(articles.update().where(articles.c.id == 1).values(title="Shaped"))
    entry = (await changes(feed, since=start, fields="title", **{"with": "author"}))["data"][0]
    assert entry["record"] == {"id": 1, "title": "Shaped", "author": {"id": 1, "name": "Anna"}}


async def test_limit_pages_in_commit_order_and_next_resumes_after_the_page(feed):
    start = await now(feed)
    for key in (7, 6, 2, 1):
        await feed.database.execute(articles.update().where(articles.c.id == key).values(views=key))
    first = await changes(feed, since=start, limit="3")
    assert [entry["id"] for entry in first["data"]] == [7, 6, 2] and first["meta"]["has_more"] is True
    assert first["meta"]["next"] == first["data"][-1]["cursor"]
    second = await changes(feed, since=first["meta"]["next"], limit="3")
    assert [entry["id"] for entry in second["data"]] == [1] and second["meta"]["has_more"] is False


async def test_a_cursor_that_does_not_decode_is_a_422_keyed_since(feed):
    response = await feed.client.get(f"{API}/changes/articles?since=nonsense", headers=feed.headers)
    assert response.status_code == 422
    assert response.json()["error"] == "validation_failed" and list(response.json()["details"]) == ["since"]


async def test_a_cursor_the_log_was_pruned_past_is_a_410(feed):
    start = await now(feed)
    await feed.database.execute(articles.update().where(articles.c.id == 1).values(views=1))
    await feed.database.execute(articles.update().where(articles.c.id == 2).values(views=2))
    assert await ChangeLog.of(feed.database).prune(days=0) == 2
    response = await feed.client.get(f"{API}/changes/articles", params={"since": start}, headers=feed.headers)
    assert response.status_code == 410 and response.json()["error"] == "cursor_expired"
    assert (await changes(feed, since=await now(feed)))["data"] == []


async def test_an_unknown_object_is_404_and_one_without_the_read_scope_is_403(feed):
    unknown = await feed.client.get(f"{API}/changes/nothing", headers=feed.headers)
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown_object"
    writer = feed.auth(await feed.token("authors.write"))
    forbidden = await feed.client.get(f"{API}/changes/authors", headers=writer)
    assert forbidden.status_code == 403 and forbidden.json()["required_scope"] == "authors.read"
    unreached = await feed.client.get(f"{API}/changes/articles", headers=writer)
    assert unreached.status_code == 404


async def test_triggers_go_when_a_table_is_no_longer_published_and_the_option_turns_them_off(
    sqlite_database, host_factory
):
    from tests.support.demo import create_demo

    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    headers = host.auth(await host.token("*"))
    await host.client.get(f"{API}/changes/articles", headers=headers)
    assert set((await _present(sqlite_database)).values()) == {"demo_articles", "demo_authors"}
    fewer = ApiRegistry()
    fewer.register("authors", DECLARATIONS["authors"])
    other = await host_factory(sqlite_database, fewer)
    await other.client.get(f"{API}/changes/authors", headers=headers)
    assert set((await _present(sqlite_database)).values()) == {"demo_authors"}
    off = await host_factory(sqlite_database, fewer, change_log=False)
    assert (await off.client.get(f"{API}/changes/authors", headers=headers)).status_code == 404


@pytest.mark.parametrize("database", ["postgresql", "mariadb"], indirect=True)
async def test_concurrent_writers_never_let_a_reader_step_over_an_uncommitted_entry(feed):
    """A writer that holds its transaction open while later writers commit: the reader, following
    the feed all along, still receives every row exactly once."""
    start = await now(feed)
    seen: list[int] = []
    done = asyncio.Event()

    async def write(key: int) -> None:
        async with feed.database.connection() as connection, connection.transaction():
            await connection.execute(articles.insert().values(id=key, title=f"row {key}", published=True))
            await asyncio.sleep(0.05 * (key % 4))  # some hold their position open while others commit

    async def follow() -> None:
        cursor = start
        while True:
            finished = done.is_set()
            body = await changes(feed, since=cursor, limit="6")
            seen.extend(entry["id"] for entry in body["data"])
            cursor = body["meta"]["next"]
            if finished and not body["meta"]["has_more"]:
                return
            await asyncio.sleep(0.01)

    reader = asyncio.create_task(follow())
    await asyncio.gather(*(write(key) for key in range(100, 140)))
    done.set()
    await reader
    assert sorted(seen) == list(range(100, 140)) and len(seen) == 40


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
async def test_on_postgresql_a_writer_left_open_holds_up_no_other_and_entries_follow_commit_order(feed):
    """The triggers number entries at commit there (docs/changes.md, "What is recorded"): a transaction
    that wrote a published row and stays open holds nothing another writer needs, and the entry of
    the writer that commits first comes first."""
    start = await now(feed)
    opened, release = asyncio.Event(), asyncio.Event()

    async def hold_open() -> None:
        async with feed.database.connection() as connection, connection.transaction():
            await connection.execute(articles.insert().values(id=60, title="left open", published=True))
            opened.set()
            await release.wait()

    holder = asyncio.create_task(hold_open())
    await opened.wait()
    try:
        created = await feed.client.post(
            f"{API}/objects/articles", json={"title": "meanwhile"}, headers=feed.headers
        )
    finally:
        release.set()
        await holder
    assert created.status_code == 201, created.text
    body = await changes(feed, since=start)
    assert [entry["id"] for entry in body["data"]] == [created.json()["data"]["id"], 60]


async def test_a_published_view_that_cannot_take_triggers_is_served_without_a_change_log(
    sqlite_database, host_factory
):
    from tests.support.demo import create_demo

    await create_demo(sqlite_database)
    await sqlite_database.execute("CREATE VIEW demo_news AS SELECT id, title FROM demo_articles")
    columns = (sa.Column("id", sa.Integer, primary_key=True), sa.Column("title", sa.String))
    view = sa.Table("demo_news", sa.MetaData(), *columns)
    registry = demo_registry()
    registry.register("news", {"model": view, "fields": ["title"]})
    host = await host_factory(sqlite_database, registry)
    headers = host.auth(await host.token("*"))
    answer = await host.client.get(f"{API}/objects/news/1", headers=headers)
    assert answer.status_code == 200 and answer.json()["data"]["title"] == "Hello world"
    assert "demo_news" not in set((await _present(sqlite_database)).values())
    assert "demo_articles" in set((await _present(sqlite_database)).values())


@pytest.mark.parametrize("path", ["/changes/{name}", "/changes/{name}/stream"])
async def test_a_custom_route_may_not_take_the_path_of_a_change_feed(sqlite_database, path):
    from pb_headless import HeadlessAPI, route
    from pb_headless.custom_routes import RouteError

    async def endpoint(request):
        return {}

    with pytest.raises(RouteError, match="would shadow the generic endpoint /changes/x"):
        HeadlessAPI(sqlite_database, ApiRegistry(), routes=[route("GET", path)(endpoint)])


async def test_the_change_log_hands_out_every_committed_entry_in_order_with_the_head(feed):
    await now(feed)  # the first request installs the triggers
    start = (await ChangeLog.of(feed.database).bounds()).head
    await feed.database.execute(articles.update().where(articles.c.id == 1).values(views=1))
    await feed.database.execute(authors.update().where(authors.c.id == 1).values(name="Ann"))
    await feed.database.execute(articles.delete().where(articles.c.id == 7))
    entries, head = await ChangeLog.of(feed.database).entries_after(start, 10)
    assert [(entry.table, entry.key, entry.op) for entry in entries] == [
        ("demo_articles", "1", "update"),
        ("demo_authors", "1", "update"),
        ("demo_articles", "7", "delete"),
    ]
    assert [entry.position for entry in entries] == [start + 1, start + 2, start + 3] and head == start + 3
    only_articles, _ = await ChangeLog.of(feed.database).entries_after(start, 10, tables=["demo_articles"])
    assert [entry.key for entry in only_articles] == ["1", "7"]
    first, _ = await ChangeLog.of(feed.database).entries_after(start, 1)
    assert [entry.key for entry in first] == ["1"]


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_an_instance_prunes_entries_older_than_the_retention_setting_in_the_background(feed):
    from pb_headless.tables import changes as change_log

    start = await now(feed)
    await feed.database.execute(articles.update().where(articles.c.id == 1).values(views=1))
    await feed.database.execute(articles.update().where(articles.c.id == 2).values(views=2))
    await feed.settings.set("service_changes_retention_days", "7")
    old = datetime(2020, 1, 1)
    first = sa.select(sa.func.min(change_log.c.position))
    await feed.database.execute(
        change_log.update().where(change_log.c.position == first.scalar_subquery()).values(changed_at=old)
    )
    following = (await changes(feed, since=start))["data"]
    assert [entry["id"] for entry in following] == [1, 2]
    feed.api.changes._next_prune = 0.0  # due now, rather than an hour after the start
    await now(feed)  # any request of the instance starts it
    await feed.api.changes._pruning
    expired = await feed.client.get(f"{API}/changes/articles", params={"since": start}, headers=feed.headers)
    assert expired.status_code == 410
    second = following[0]["cursor"]  # the pruned entry's own cursor: everything after it is still there
    assert [entry["id"] for entry in (await changes(feed, since=second))["data"]] == [2]


async def _present(database) -> dict[str, str]:
    """The change-log triggers in the database: name → table."""
    return await ChangeLog.of(database).present_triggers()
