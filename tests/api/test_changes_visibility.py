"""docs/changes.md, "Which changes an object shows": a row the object served neither before nor after a
change gets no entry in the feed, the stream or a webhook (a draft's key is never sent); a row that
left the object's view still comes as a `delete`. On each database, written as any program writes."""

from __future__ import annotations

import httpx
import pytest

from pb_headless.changes import ChangeLog
from pb_headless.webhooks.store import WebhookStore
from tests.support.demo import DECLARATIONS, articles, create_demo, demo_registry
from tests.support.live import event_stream, serving
from tests.webhooks.changes import with_change_log
from tests.webhooks.conftest import FAST
from tests.webhooks.receiver import running_receiver

API = "/api/pb/v1"
DRAFT = {"id": 40, "title": "Acme acquisition 2027 (draft)", "category": "news", "published": False}


@pytest.fixture
async def site(database, host_factory):
    """The demo with a second object on the articles table, `news`, narrowed by its `query`."""
    await create_demo(database)
    registry = demo_registry()
    news = {**DECLARATIONS["articles"], "query": lambda select: select.where(articles.c.category == "news")}
    registry.register("news", news)
    host = await host_factory(database, registry)
    host.headers = host.auth(await host.token("articles.read,articles.write,news.read"))
    return host


async def changes(host, name: str, since: str | None = None) -> list[tuple[str, object]]:
    query = {"since": since} if since is not None else {}
    response = await host.client.get(f"{API}/changes/{name}", params=query, headers=host.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    return body if since is None else [(entry["op"], entry["id"]) for entry in body["data"]]


async def now(host, name: str = "articles") -> str:
    return (await changes(host, name))["meta"]["next"]


async def write_draft(host) -> None:
    """A draft created and edited twice, unpublished all along: by the site's code, by plain SQL."""
    await host.database.execute(articles.insert().values(**DRAFT))
    await host.database.execute(articles.update().where(articles.c.id == 40).values(title="Acme, take 2"))
    await host.database.execute("UPDATE demo_articles SET views = 3 WHERE id = 40")


async def test_a_draft_created_and_edited_unpublished_never_appears_in_the_feed(site):
    starts = {name: await now(site, name) for name in ("articles", "news")}
    await write_draft(site)
    created = await site.client.post(
        f"{API}/objects/articles", json={"title": "API draft", "published": False}, headers=site.headers
    )
    assert created.status_code == 201, created.text
    await site.database.execute(articles.update().where(articles.c.id == 2).values(views=11))
    assert await changes(site, "articles", starts["articles"]) == [("upsert", 2)]
    assert await changes(site, "news", starts["news"]) == []  # article 2 is not news


async def test_a_draft_whose_key_changed_still_never_appears(site):
    start = await now(site)
    await write_draft(site)
    await site.database.execute(articles.update().where(articles.c.id == 40).values(id=41))
    await site.database.execute(articles.delete().where(articles.c.id == 41))
    assert await changes(site, "articles", start) == []


async def test_a_row_unpublished_comes_as_delete_and_its_edits_as_a_draft_do_not_move_it(site):
    start = await now(site)
    await site.database.execute(articles.update().where(articles.c.id == 7).values(published=False))
    after_unpublishing = await now(site)
    await site.database.execute(articles.update().where(articles.c.id == 7).values(title="Quietly edited"))
    assert await changes(site, "articles", start) == [("delete", 7)]
    assert await changes(site, "news", start) == [("delete", 7)]  # article 7 is news
    assert await changes(site, "articles", after_unpublishing) == []
    await site.database.execute(articles.update().where(articles.c.id == 7).values(published=True))
    assert await changes(site, "articles", after_unpublishing) == [("upsert", 7)]


async def test_a_row_outside_query_never_appears_and_one_that_left_it_comes_as_delete(site):
    start = await now(site, "news")
    await site.database.execute(
        articles.insert().values(id=42, title="Company party", category="company", published=True)
    )
    await site.database.execute(articles.update().where(articles.c.id == 42).values(title="Party!"))
    await site.database.execute(articles.update().where(articles.c.id == 7).values(category="sales"))
    await site.database.execute(articles.update().where(articles.c.id == 3).values(category="news"))
    assert await changes(site, "news", start) == [("delete", 7), ("upsert", 3)]


async def test_a_deleted_draft_never_appears_and_a_deleted_published_row_does(site):
    start = await now(site)
    await write_draft(site)
    await site.database.execute(articles.delete().where(articles.c.id == 40))
    await site.database.execute(articles.delete().where(articles.c.id == 6))
    assert await changes(site, "articles", start) == [("delete", 6)]


async def test_the_stream_never_sends_a_draft(site):
    stream = f"{API}/changes/articles/stream"
    async with (
        serving(site.app) as base,
        httpx.AsyncClient(base_url=base, timeout=30) as client,
        event_stream(client, stream, site.headers) as events,
    ):
        await events.opened()
        await write_draft(site)
        await site.database.execute(articles.update().where(articles.c.id == 2).values(views=5))
        [event] = await events.take(1)
    assert (event.event, event.data["id"]) == ("upsert", 2)


async def test_a_webhook_never_hears_of_a_draft_but_of_its_unpublishing(database, host_factory):
    await create_demo(database)
    host = await host_factory(database, demo_registry(), webhooks=FAST)
    await with_change_log(database)
    await host.settings.set("service_webhooks_allow_private", "yes")
    async with running_receiver() as receiver:
        await WebhookStore(database).create("site", receiver.url)
        await write_draft(host)
        await database.execute(articles.update().where(articles.c.id == 2).values(published=False))
        for _ in range(10):
            if not await host.api.webhooks.run_once():
                break
        await host.api.webhooks.stop()
    assert [(post.event["type"], post.event["data"]["id"]) for post in receiver.received] == [
        ("articles.update", 2)
    ]


async def test_triggers_follow_a_changed_rule(database, host_factory):
    await create_demo(database)
    registry = demo_registry()
    registry.register("news", {**DECLARATIONS["articles"], "query": lambda s: s.where(articles.c.views > 1)})
    host = await host_factory(database, registry)
    token = host.auth(await host.token("news.read"))
    await host.client.get(f"{API}/objects", headers=token)
    before = {name for name, table in (await _present(database)).items() if table == "demo_articles"}
    registry.register("news", {**DECLARATIONS["articles"], "query": lambda s: s.where(articles.c.views > 2)})
    await host.client.get(f"{API}/objects", headers=token)
    after = {name for name, table in (await _present(database)).items() if table == "demo_articles"}
    assert before and after and before.isdisjoint(after)


async def _present(database) -> dict[str, str]:
    """The change-log triggers in the database: name → table."""
    return await ChangeLog.of(database).present_triggers()
