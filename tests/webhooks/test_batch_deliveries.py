"""A batch's changes reach webhooks after its commit, every one of them (docs/writes.md, "Atomic
batches"); a batch that fails sends nothing."""

from __future__ import annotations

import sqlalchemy as sa

from pb_headless.tables import webhook_tables

BATCH = "/api/pb/v1/batch"
deliveries = webhook_tables.deliveries


async def test_every_change_of_a_batch_is_delivered_after_its_commit_in_the_order_written(site):
    await site.hook()
    headers = site.host.auth(await site.host.token("articles.*"))
    operations = [
        {"op": "create", "object": "articles", "data": {"title": "Batch one"}, "label": "one"},
        {"op": "update", "object": "articles", "id": 6, "data": {"title": "Batch two"}},
        {"op": "create", "object": "articles", "data": {"title": "Batch three"}},
        {"op": "delete", "object": "articles", "id": 7},
    ]
    answer = await site.host.client.post(BATCH, json={"operations": operations}, headers=headers)
    assert answer.status_code == 200, answer.text
    one, _, three, _ = (result["data"] for result in answer.json()["data"])
    await site.deliver()

    events = [(post.event["type"], post.event["data"]["id"]) for post in site.receiver.received]
    assert sorted(events, key=str) == sorted(
        [
            ("articles.create", one["id"]),
            ("articles.update", 6),
            ("articles.create", three["id"]),
            ("articles.delete", 7),
        ],
        key=str,
    )
    # The outbox holds them in the order the batch wrote them (deliveries themselves go out in parallel).
    rows = await site.database.fetch_all(
        sa.select(deliveries.c.event, deliveries.c.row_key).order_by(deliveries.c.position)
    )
    assert [(row[0], row[1]) for row in rows] == [
        ("create", str(one["id"])),
        ("update", "6"),
        ("create", str(three["id"])),
        ("delete", "7"),
    ]
    titles = {
        post.event["data"]["id"]: (post.event["data"]["record"] or {}).get("title")
        for post in site.receiver.received
    }
    assert titles[one["id"]] == "Batch one" and titles[6] == "Batch two" and titles[7] is None


async def test_a_batch_that_fails_sends_nothing(site):
    await site.hook()
    headers = site.host.auth(await site.host.token("articles.*"))
    operations = [
        {"op": "create", "object": "articles", "data": {"title": "Never stored"}},
        {"op": "update", "object": "articles", "id": 999, "data": {"title": "No such row"}},
    ]
    answer = await site.host.client.post(BATCH, json={"operations": operations}, headers=headers)
    assert answer.status_code == 404 and answer.json()["operation"] == 1
    await site.deliver()
    assert site.receiver.received == []
