"""Deliveries through the real stack: a change in the log reaches a loopback receiver as a signed POST,
with the record as the API shows it, retried until it succeeds or its tries run out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from pb_headless.database.dialect import utcnow
from pb_headless.webhooks.pruning import prune_deliveries
from tests.support.demo import articles
from tests.webhooks.changes import create_row, delete_row, update_row

NEW_ARTICLE = {"id": 8, "title": "Fresh", "category": "news", "published": True}


async def test_a_created_row_arrives_signed_so_the_standardwebhooks_package_verifies_it(site):
    secret = await site.hook()
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.deliver()

    [post] = site.receiver.received
    verified = Webhook(secret).verify(post.body, post.headers)
    shown = await site.host.client.get(
        "/api/pb/v1/objects/articles/8", headers=site.host.auth(await site.host.token())
    )
    assert verified["type"] == "articles.create"
    assert verified["data"] == {"object": "articles", "id": 8, "record": shown.json()["data"]}
    assert verified["timestamp"].endswith("Z")


async def test_writes_through_the_api_site_code_and_plain_sql_each_arrive_once(site):
    await site.hook()
    headers = site.host.auth(await site.host.token("articles.write"))
    created = await site.host.client.post(
        "/api/pb/v1/objects/articles", json={"title": "By the API"}, headers=headers
    )
    assert created.status_code == 201, created.text
    await site.database.execute(articles.insert().values(id=50, title="By the site's code", published=True))
    await site.database.execute(
        "INSERT INTO demo_articles (id, title, published) VALUES (51, 'By plain SQL', TRUE)"
    )
    await site.deliver()

    events = [(post.event["type"], post.event["data"]["id"]) for post in site.receiver.received]
    assert sorted(events, key=str) == sorted(
        [("articles.create", created.json()["data"]["id"]), ("articles.create", 50), ("articles.create", 51)],
        key=str,
    )
    assert len({post.headers["webhook-id"] for post in site.receiver.received}) == 3


async def test_a_body_changed_on_the_way_fails_verification(site):
    secret = await site.hook()
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.deliver()

    [post] = site.receiver.received
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(post.body.replace(b"Fresh", b"Stale"), post.headers)


async def test_a_delete_and_a_row_no_longer_published_carry_a_null_record(site):
    await site.hook()
    await update_row(site.database, articles, 1, {"published": False})
    await delete_row(site.database, articles, 4)
    await site.deliver()

    events = sorted((post.event["type"], post.event["data"]) for post in site.receiver.received)
    assert events == [
        ("articles.delete", {"object": "articles", "id": 4, "record": None}),
        ("articles.update", {"object": "articles", "id": 1, "record": None}),
    ]


async def test_an_endpoint_gets_only_the_objects_and_events_it_asked_for(site):
    await site.hook(objects="authors", events="update")
    await update_row(site.database, articles, 1, {"title": "Not for this endpoint"})
    await create_row(site.database, articles, NEW_ARTICLE)
    await update_row(site.database, site_authors(), 2, {"name": "Boris B."})
    await site.deliver()

    assert [post.event["type"] for post in site.receiver.received] == ["authors.update"]
    assert site.receiver.received[0].event["data"]["record"] == {"id": 2, "name": "Boris B.", "email": None}


async def test_a_disabled_endpoint_gets_nothing_and_changes_made_meanwhile_are_not_sent_later(site):
    await site.hook()
    await site.store.disable("site")
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.deliver()
    await site.store.enable("site")
    await update_row(site.database, articles, 8, {"title": "After enabling"})
    await site.deliver()

    assert [post.event["type"] for post in site.receiver.received] == ["articles.update"]


async def test_a_failed_try_is_retried_and_the_log_shows_the_tries_and_the_answer(site):
    await site.hook()
    site.receiver.status = 503
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.worker.run_once()
    site.receiver.status = 200
    await site.deliver()

    [delivery] = await site.store.deliveries("site")
    assert (delivery.status, delivery.tries, delivery.answer_code) == ("success", 2, 200)
    assert delivery.next_try_at is None and delivery.duration_ms is not None
    first, second = site.receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"]  # a receiver can drop repeats


async def test_when_the_tries_run_out_the_delivery_is_failed_and_redeliver_sends_it_again(site):
    await site.hook()
    site.receiver.status = 500
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.deliver()
    [failed] = await site.store.deliveries("site")
    site.receiver.status = 200
    await site.store.redeliver(failed.id)
    await site.deliver()

    assert (failed.status, failed.tries, failed.answer_code) == ("failed", 4, 500)  # 1 try + 3 retries
    [delivered] = await site.store.deliveries("site")
    assert (delivered.status, delivered.answer_code) == ("success", 200)
    assert len(site.receiver.received) == 5


async def test_a_redirect_is_not_followed_and_counts_as_a_failed_try(site):
    await site.hook()
    site.receiver.status = 307
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.worker.run_once()

    [delivery] = await site.store.deliveries("site")
    assert (delivery.status, delivery.answer_code, delivery.error) == ("pending", 307, "answer 307")
    assert len(site.receiver.received) == 1


async def test_a_receiver_down_for_a_while_gets_every_event_afterwards_in_order_per_record(site):
    await site.hook()
    site.receiver.status = 503
    await create_row(site.database, articles, NEW_ARTICLE)
    await create_row(site.database, articles, {**NEW_ARTICLE, "id": 9})
    for round_ in range(3):
        await update_row(site.database, articles, 8, {"views": round_})
        await update_row(site.database, articles, 9, {"views": round_})
    await delete_row(site.database, articles, 9)
    await site.worker.run_once()
    await site.worker.run_once()
    site.receiver.status = 200
    await site.deliver(steps=30)

    per_record: dict[int, list[str]] = {}
    for post in site.receiver.accepted:
        per_record.setdefault(post.event["data"]["id"], []).append(post.event["type"].split(".")[1])
    assert per_record == {8: ["create", *["update"] * 3], 9: ["create", *["update"] * 3, "delete"]}
    assert {delivery.status for delivery in await site.store.deliveries("site")} == {"success"}


async def test_an_endpoint_failing_for_longer_than_allowed_is_disabled_with_a_note(site):
    from dataclasses import replace

    site.worker.options = replace(site.worker.options, disable_after=timedelta(0))
    await site.hook()
    site.receiver.status = 503
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.deliver()

    [webhook] = await site.store.list()
    assert not webhook.enabled
    assert webhook.note is not None and webhook.note.startswith("Disabled on ")
    assert (await site.store.enable("site")).note is None


def site_authors():
    from tests.support.demo import authors

    return authors


async def test_finished_deliveries_older_than_the_kept_time_leave_the_log_pending_ones_stay(site):
    await site.hook()
    await create_row(site.database, articles, {**NEW_ARTICLE, "id": 9})
    await site.deliver()
    site.receiver.status = 503
    await create_row(site.database, articles, NEW_ARTICLE)
    await site.worker.run_once()

    assert await prune_deliveries(site.database, utcnow() + timedelta(seconds=1)) == 1
    left = await site.store.deliveries("site")
    assert [(delivery.row_key, delivery.status) for delivery in left] == [("8", "pending")]
