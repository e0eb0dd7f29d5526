"""A real HTTP server in the test's own event loop, for answers an in-memory transport cannot carry
(httpx's ASGI transport waits for the whole body, and a stream has no end): uvicorn on a free
loopback port, serving a host built by tests/support/host.py on the test's database."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn

from tests.support.server import free_port


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """The base URL of `app` served by uvicorn until the block ends."""
    config = uvicorn.Config(app, host="127.0.0.1", port=free_port(), lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)


@dataclass
class Event:
    event: str
    id: str
    data: dict[str, Any]


@dataclass
class EventReader:
    """Server-sent events read line by line from one open response; comments are kept apart."""

    response: httpx.Response
    comments: list[str] = field(default_factory=list)
    _lines: Any = None

    async def next(self, timeout: float = 10.0) -> Event | None:
        """The next event, or None when the stream ended."""
        while True:
            item = await self.item(timeout)
            if not isinstance(item, str):
                return item

    async def item(self, timeout: float) -> Event | str | None:
        """The next event or comment; None at the end."""
        if self._lines is None:
            self._lines = self.response.aiter_lines()
        fields: dict[str, str] = {}
        while True:
            try:
                line = await asyncio.wait_for(anext(self._lines), timeout)
            except StopAsyncIteration:
                return None
            if line.startswith(":"):
                self.comments.append(line[1:].strip())
                return line[1:].strip()
            if line == "":
                if "data" in fields:
                    data = json.loads(fields["data"])
                    return Event(fields.get("event", "message"), fields.get("id", ""), data)
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")

    async def take(self, count: int, timeout: float = 10.0) -> list[Event]:
        taken = []
        while len(taken) < count:
            event = await self.next(timeout)
            if event is None:
                break
            taken.append(event)
        return taken

    async def opened(self, timeout: float = 10.0) -> None:
        """Wait for the comment the stream opens with (the server holds the client's place then)."""
        while (item := await self.item(timeout)) != "stream open":
            assert isinstance(item, str), item


@contextlib.asynccontextmanager
async def event_stream(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> AsyncIterator[EventReader]:
    async with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200, (await response.aread()).decode()
        reader = EventReader(response)
        yield reader
