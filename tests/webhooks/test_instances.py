"""Several instances on one database, and the worker's life with the application."""

from __future__ import annotations

import asyncio

from databases import Database

from pb_headless import HeadlessAPI
from tests.support.demo import articles, demo_registry
from tests.webhooks.changes import create_row, update_row
from tests.webhooks.conftest import FAST

WAIT = 20.0  # seconds a background delivery may take before the test gives up


async def test_two_instances_on_one_database_send_every_event_exactly_once(site, host_factory):
    second_database = Database(str(site.database.url))
    await second_database.connect()
    second = await host_factory(second_database, demo_registry(), webhooks=FAST)
    try:
        await site.hook()
        for number in range(10, 30):
            row = {"id": number, "title": f"A{number}", "published": True}
            await create_row(site.database, articles, row)
            await update_row(second_database, articles, number, {"title": f"B{number}"})
        idle_rounds = 0
        while idle_rounds < 2:
            made = await asyncio.gather(site.worker.run_once(), second.api.webhooks.run_once())
            idle_rounds = idle_rounds + 1 if not any(made) else 0
    finally:
        await second.api.webhooks.stop()
        await second_database.disconnect()

    message_ids = [post.headers["webhook-id"] for post in site.receiver.received]
    assert len(message_ids) == 40
    assert len(set(message_ids)) == 40


async def test_the_worker_delivers_in_the_background_of_a_started_app_and_stops_with_it(sqlite_site):
    site = sqlite_site
    await site.hook()
    await site.host.api.startup()
    try:
        await create_row(site.database, articles, {"id": 8, "title": "Live", "published": True})
        for _ in range(int(WAIT / 0.05)):
            if site.receiver.received:
                break
            await asyncio.sleep(0.05)
    finally:
        await site.host.api.shutdown()

    assert [post.event["type"] for post in site.receiver.received] == ["articles.create"]
    assert not site.worker.running


def test_the_worker_can_be_turned_off(sqlite_database):
    api = HeadlessAPI(sqlite_database, demo_registry(), webhooks=False)
    assert api.webhooks is None


async def test_shutdown_during_a_try_abandons_it_and_leaves_the_delivery_to_be_tried_again(site):
    await site.hook()
    site.receiver.delay = 3  # the try is still waiting for its answer when the app stops
    await create_row(site.database, articles, {"id": 8, "title": "Cut short", "published": True})
    await site.host.api.startup()
    for _ in range(int(WAIT / 0.05)):
        if site.receiver.arriving:
            break
        await asyncio.sleep(0.05)
    await site.host.api.shutdown()

    [delivery] = await site.store.deliveries("site")
    assert not site.worker.running
    assert (delivery.status, delivery.tries) == ("pending", 0)  # no answer recorded: it comes back
    assert delivery.next_try_at is not None and delivery.next_try_at > delivery.changed_at


async def test_on_sqlite_another_process_can_manage_endpoints_while_deliveries_run(sqlite_site):
    site = sqlite_site
    await site.hook()
    site.receiver.delay = 0.05
    for number in range(100, 130):
        await create_row(site.database, articles, {"id": number, "title": "t", "published": True})
    shell = Database(str(site.database.url))  # as `pb-headless` connects: its own connections
    await shell.connect()
    await site.host.api.startup()
    try:
        from pb_headless import WebhookStore

        store = WebhookStore(shell)
        for round_ in range(10):
            await store.create(f"other-{round_}", "https://hooks.example.com/", enabled=False)
            await store.delete(f"other-{round_}")
            await asyncio.sleep(0.05)
    finally:
        await site.host.api.shutdown()
        await shell.disconnect()
    assert [webhook.name for webhook in await site.store.list()] == ["site"]
