"""Site owners' tools on an endpoint, through the store the administration area and the console share:
edit it keeping its secret and log, send a test event, see it failing, refused names and a missing sender."""

from __future__ import annotations

import sys

import pytest
from standardwebhooks import Webhook

from pb_headless.webhooks.store import WebhookError
from tests.support.demo import articles
from tests.webhooks.changes import create_row

NEW_ARTICLE = {"id": 8, "title": "Fresh", "category": "news", "published": True}
PUBLISHED = ("articles", "authors", "comments")


async def test_an_edit_keeps_the_secret_and_the_delivery_log(site):
    secret = await site.hook(objects=["authors"], events=["create"])
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.deliver()
    assert site.receiver.received == []  # articles was not wanted yet

    edited = await site.store.update(
        "site", url=site.receiver.url + "?v=2", objects="articles", events=["create", "update"]
    )
    await create_row(site.database, articles, {**NEW_ARTICLE, "id": 9})
    await site.deliver()

    assert (edited.url, edited.objects, edited.events) == (
        site.receiver.url + "?v=2",
        ("articles",),
        ("create", "update"),
    )
    [post] = site.receiver.received
    assert Webhook(secret).verify(post.body, post.headers)["data"]["id"] == 9  # the same secret
    await site.store.send_test("site")
    await site.store.update("site", enabled=False)
    assert [item.event for item in await site.store.deliveries("site")] == ["test", "create"]
    assert not (await site.store.get("site")).enabled


async def test_a_test_event_is_a_signed_delivery_typed_object_test_and_kept_in_the_log(site):
    secret = await site.hook(objects=["articles"])
    delivery = await site.store.send_test("site")

    [post] = site.receiver.received
    event = Webhook(secret).verify(post.body, post.headers)
    assert event["type"] == "articles.test" and event["timestamp"].endswith("Z")
    assert event["data"] == {"object": "articles", "id": None, "record": None}
    assert (delivery.status, delivery.tries, delivery.answer_code) == ("success", 1, 200)
    assert delivery.type == "articles.test" and delivery.message_id == post.headers["webhook-id"]
    assert delivery.last_try_at is not None
    assert [item.id for item in await site.store.deliveries("site")] == [delivery.id]
    await site.deliver()
    assert len(site.receiver.received) == 1  # sent once, not again by the worker


async def test_a_test_event_of_an_endpoint_of_every_object_names_a_published_one(site):
    await site.hook()
    with pytest.raises(WebhookError, match="takes every object"):
        await site.store.send_test("site")
    await site.store.send_test("site", known=PUBLISHED)
    await site.store.send_test("site", object_name="comments", known=PUBLISHED)
    assert [post.event["type"] for post in site.receiver.received] == ["articles.test", "comments.test"]


async def test_a_refused_test_event_marks_the_endpoint_failing_with_its_error_until_one_succeeds(site):
    await site.hook(objects=["articles"])
    site.receiver.status = 500
    failed = await site.store.send_test("site")
    failing = await site.store.get("site")
    site.receiver.status = 204
    await site.store.send_test("site")
    working = await site.store.get("site")

    assert (failed.status, failed.answer_code, failed.error, failed.next_try_at) == (
        "failed",
        500,
        "answer 500",
        None,
    )
    assert failing.failing and failing.last_error == "answer 500"
    assert not working.failing and working.last_status == "success"


async def test_unknown_objects_are_refused_with_the_nearest_published_name(sqlite_site):
    store = sqlite_site.store
    url = sqlite_site.receiver.url
    with pytest.raises(WebhookError, match=r"unknown object 'artciles': did you mean 'articles'\?"):
        await store.create("typo", url, objects="artciles", known=PUBLISHED)
    await store.create("fine", url, objects="articles", known=PUBLISHED)
    with pytest.raises(WebhookError, match="unknown object 'zzz': the published objects are articles"):
        await store.update("fine", objects="articles,zzz", known=PUBLISHED)
    assert [item.name for item in await store.list()] == ["fine"]
    assert (await store.get("fine")).objects == ("articles",)


async def test_without_the_sender_registering_an_endpoint_is_refused_with_the_command_to_install_it(
    sqlite_site, monkeypatch
):
    await sqlite_site.hook("before")
    await sqlite_site.store.disable("before")
    monkeypatch.setitem(sys.modules, "httpcore", None)  # as if the extra were not installed
    for attempt in (
        sqlite_site.store.create("new", "https://hooks.example.com/"),
        sqlite_site.store.enable("before"),
        sqlite_site.store.send_test("before"),
    ):
        with pytest.raises(WebhookError, match=r"pip install 'pb_headless\[webhooks\]'"):
            await attempt
    assert [item.name for item in await sqlite_site.store.list()] == ["before"]
