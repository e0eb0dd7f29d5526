"""docs/changes.md, "What the streams of an instance may take": a bound of open streams per instance,
and one read of the log shared by every stream of an object that is caught up."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

from pb_headless.changes import stream as stream_module
from tests.support.demo import articles, create_demo, demo_registry
from tests.support.live import event_stream, serving

STREAM = "/api/pb/v1/changes/articles/stream"


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_past_the_instances_bound_a_stream_is_refused_with_503_and_retry_after(database, host_factory):
    await create_demo(database)
    host = await host_factory(database, demo_registry(), max_streams=3)
    first, second = host.auth(await host.token("articles.read")), host.auth(await host.token("articles.read"))
    async with serving(host.app) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        async with contextlib.AsyncExitStack() as opened:
            for headers in (first, first, second):  # two tokens: the bound is the instance's
                events = await opened.enter_async_context(event_stream(client, STREAM, headers))
                await events.opened()
            refused = await client.get(STREAM, headers=second)
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"] == "service_unavailable"
            assert int(refused.headers["Retry-After"]) > 0
            assert (await client.get("/api/pb/v1/health")).status_code == 200  # the rest is served
        async with event_stream(client, STREAM, second) as events:  # a place is free again
            await events.opened()


async def test_streams_of_one_object_share_one_read_of_the_log(demo):
    """25 streams of one object that are caught up, and a transaction writing 5 rows: every stream
    gets the 5 events, and the log is read about once for all of them, not once per stream."""
    tokens = [demo.auth(await demo.token("articles.read")) for _ in range(5)]
    reads = []
    fetch_all = demo.database.fetch_all

    async def counted(query, *args, **kwargs):
        if "pb_changes" in str(query):
            reads.append(str(query))  # entries read (the head lives in pb_state)
        return await fetch_all(query, *args, **kwargs)

    async with (
        serving(demo.app) as base,
        httpx.AsyncClient(base_url=base, timeout=30) as client,
        contextlib.AsyncExitStack() as opened,
    ):
        streams = []
        for headers in tokens:
            for _ in range(5):
                streams.append(await opened.enter_async_context(event_stream(client, STREAM, headers)))
                await streams[-1].opened()
        await asyncio.sleep(0.5)  # each stream's first look at the log, made as it opens
        demo.database.fetch_all = counted
        try:
            async with demo.database.transaction():
                for key in range(500, 505):
                    await demo.database.execute(
                        articles.insert().values(id=key, title=f"r{key}", published=True)
                    )
            received = [[event.data for event in await events.take(5)] for events in streams]
        finally:
            del demo.database.fetch_all
    assert all(events == received[0] for events in received)
    assert [entry["id"] for entry in received[0]] == list(range(500, 505))
    assert len(reads) <= 3, f"{len(reads)} reads of the log for 25 streams"


async def test_caught_up_streams_get_a_burst_of_300_rows_from_the_shared_read_once_and_in_order(demo):
    """One transaction of 300 rows: more than a page, fewer than one poll reads. Each of three
    streams gets every row once, in commit order."""
    headers = demo.auth(await demo.token("articles.read"))
    async with (
        serving(demo.app) as base,
        httpx.AsyncClient(base_url=base, timeout=30) as client,
        contextlib.AsyncExitStack() as opened,
    ):
        streams = [await opened.enter_async_context(event_stream(client, STREAM, headers)) for _ in range(3)]
        for events in streams:
            await events.opened()
        await asyncio.sleep(0.5)  # each stream's first look at the log, made as it opens
        rows = [{"id": key, "title": f"burst {key}", "published": True} for key in range(2000, 2300)]
        async with demo.database.transaction():
            await demo.database.execute_many(articles.insert(), rows)
        received = [[event.data["id"] for event in await events.take(300)] for events in streams]
    assert received == [list(range(2000, 2300))] * 3


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_stream_waiting_its_turn_for_a_backlog_keeps_its_connection_alive(demo, monkeypatch):
    """While other streams hold the backlog lane, a waiting stream still sends its heartbeat (proxies
    close a silent connection), then replays its backlog once the lane is free."""
    monkeypatch.setattr(stream_module, "HEARTBEAT", 0.2)
    monkeypatch.setattr(stream_module, "LANE_WAIT", 0.1)
    headers = demo.auth(await demo.token("articles.read"))
    async with serving(demo.app) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        since = (await client.get("/api/pb/v1/changes/articles", headers=headers)).json()["meta"]["next"]
        await demo.database.execute(articles.insert().values(id=900, title="behind", published=True))
        lane = demo.api.streams.replay_lane
        await lane.acquire()  # as another stream reading its page
        async with event_stream(client, f"{STREAM}?since={since}", headers) as events:
            await events.opened()
            assert await events.item(timeout=5) == "keep-alive"
            lane.release()
            (event,) = await events.take(1)
    assert event.data["id"] == 900
