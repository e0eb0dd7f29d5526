"""docs/webhooks.md, "How deliveries work": one endpoint whose receiver hangs does not delay the others.

The attack of issue 34: a receiver that accepts the connection and never answers holds each try for
the whole 10 s answer limit. With the worker waiting for a step's slowest try, 60 events to a healthy
endpoint took 84 s; each must still have its first try within 5 s of its commit.
"""

from __future__ import annotations

import asyncio
import time

from pb_headless.webhooks.options import WebhookOptions
from pb_headless.webhooks.store import WebhookStore
from tests.support.demo import articles, create_demo, demo_registry
from tests.webhooks.changes import create_row, with_change_log
from tests.webhooks.receiver import hanging_receiver, running_receiver

EVENTS = 60
FIRST_TRY = 5.0  # seconds from the commit to the first try, as documented


async def test_a_hanging_receiver_does_not_delay_another_endpoints_deliveries(database, host_factory):
    await create_demo(database)
    # The documented timings (10 s answer limit, a look about once a second, 20 tries at once).
    host = await host_factory(database, demo_registry(), webhooks=WebhookOptions())
    await with_change_log(database)
    await host.settings.set("service_webhooks_allow_private", "yes")  # the receivers are on loopback
    store = WebhookStore(database)
    async with hanging_receiver() as (dead_url, dead_arrivals), running_receiver() as healthy:
        await store.create("dead", dead_url)
        await store.create("healthy", healthy.url)
        host.api.webhooks.start()
        try:
            committed = {}
            for key in range(1000, 1000 + EVENTS):  # 60 commits over about 3 s
                await create_row(database, articles, {"id": key, "title": f"Row {key}", "published": True})
                committed[key] = time.monotonic()
                await asyncio.sleep(0.05)
            for _ in range(600):
                if len({post.event["data"]["id"] for post in healthy.received}) >= EVENTS:
                    break
                await asyncio.sleep(0.1)
        finally:
            await host.api.webhooks.stop()
    first = {}
    for post in healthy.received:
        first.setdefault(post.event["data"]["id"], post.at)
    assert sorted(first) == sorted(committed), "not every event reached the healthy endpoint"
    late = {
        key: round(first[key] - committed[key], 1)
        for key in committed
        if first[key] - committed[key] > FIRST_TRY
    }
    assert not late, f"first tries later than {FIRST_TRY:g} s after the commit (s): {late}"
    assert dead_arrivals, "the hanging receiver was never tried: the test proves nothing"
