"""A real webhook receiver on loopback for tests: a uvicorn server in the test's own event loop that
records every POST and answers with the status the test chooses; and one that never answers."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import orjson
import uvicorn


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)  # when the request had arrived whole

    @property
    def event(self) -> dict:
        return orjson.loads(self.body)


@dataclass
class Receiver:
    url: str = ""
    status: int = 200  # what the next POSTs are answered with (503: "down")
    delay: float = 0.0  # seconds each answer takes (a slow receiver keeps tries in flight)
    arriving: int = 0  # requests that have arrived, answered or not yet
    received: list[Received] = field(default_factory=list)

    @property
    def accepted(self) -> list[Received]:
        """The POSTs answered with a 2xx, in arrival order."""
        return [item for item, status in zip(self.received, self._answers, strict=True) if status < 300]

    _answers: list[int] = field(default_factory=list)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
        arrived = Received(headers, body)
        self.arriving += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        self.received.append(arrived)
        self._answers.append(self.status)
        await send({"type": "http.response.start", "status": self.status, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


@contextlib.asynccontextmanager
async def running_receiver(path: str = "/hook") -> AsyncIterator[Receiver]:
    receiver = Receiver()
    config = uvicorn.Config(receiver, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    receiver.url = f"http://127.0.0.1:{port}{path}"
    try:
        yield receiver
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def hanging_receiver() -> AsyncIterator[tuple[str, list[float]]]:
    """A loopback server that reads each request and never answers; yields its URL and the times
    connections arrived."""
    arrived: list[float] = []
    handlers: set[asyncio.Task] = set()

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.add(asyncio.current_task())
        arrived.append(time.monotonic())
        with contextlib.suppress(Exception):
            while await reader.read(65536):  # until the sender gives up and closes
                pass
        writer.close()

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/hook", arrived
    finally:
        server.close()
        for handler in handlers:
            handler.cancel()
