"""Serving an ASGI application in-process as a server would: lifespan start-up, requests, shut-down."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

BASE_URL = "http://testserver"


@contextlib.asynccontextmanager
async def serving(
    app: Any, client: tuple[str, int] = ("203.0.113.20", 51000)
) -> AsyncIterator[httpx.AsyncClient]:
    """Run the app's lifespan (any ASGI app: Starlette, FastAPI, a bare callable) around an httpx client."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
    task = asyncio.create_task(app(scope, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    started = await asyncio.wait_for(outbox.get(), timeout=30)
    if started["type"] != "lifespan.startup.complete":
        await task
        raise RuntimeError(f"the app did not start: {started.get('message', started)}")
    transport = httpx.ASGITransport(app=app, client=client)
    try:
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            yield http
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        stopped = await asyncio.wait_for(outbox.get(), timeout=30)
        await task
        assert stopped["type"] == "lifespan.shutdown.complete", stopped
