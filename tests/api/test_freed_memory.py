"""docs/performance.md, "Freed memory": while requests come, a started API gives the pages of memory
freed since back to the system once every interval; an idle one, or one shut down, does nothing."""

from __future__ import annotations

import asyncio

from pb_headless.api import application
from tests.support.demo import create_demo, demo_registry


async def test_freed_memory_goes_back_once_an_interval_while_requests_come(
    sqlite_database, host_factory, monkeypatch
):
    given_back = []
    monkeypatch.setattr(application, "RELEASE_INTERVAL", 0.05)
    monkeypatch.setattr(application, "release_freed_memory", lambda: given_back.append(True) or True)
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    await host.api.startup()
    try:
        await asyncio.sleep(0.2)
        assert given_back == []  # nothing was asked: nothing to give back
        headers = host.auth(await host.token("articles.read"))
        answer = await host.client.get("/api/pb/v1/objects/articles", headers=headers)
        assert answer.status_code == 200
        await asyncio.sleep(0.2)
        assert len(given_back) == 1  # once for the requests of that interval, not once an interval
    finally:
        await host.api.shutdown()
    await host.client.get("/api/pb/v1/health")
    await asyncio.sleep(0.2)
    assert len(given_back) == 1  # shut down: no timer left
