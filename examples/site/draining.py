"""Leaving a proxy's rotation without a 502: the site drains for a while after SIGTERM.

A proxy such as nginx keeps idle connections to each instance and reuses them. When the server closes
an idle connection in the same instant the proxy sends a request on it, the request meets a closed
socket; nginx retries only idempotent methods there, so a POST would get nginx's own 502.

So, with `PB_DRAIN_SECONDS` set (docs/deployment.md, "Restarts and outages"), SIGTERM first starts a
drain: for that many seconds the site keeps accepting connections and answers every request with
`Connection: close`, so the proxy stops keeping connections to it, and the connections it left idle
reach the proxy's own idle timeout and are closed from its side. Only then does the server's own
SIGTERM handler run: it stops listening, finishes the requests in flight and exits. A second SIGTERM
during the drain stops at once, as without it. SIGINT (Ctrl+C) never drains.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("uvicorn.error")

CLOSE = (b"connection", b"close")


class Draining:
    """The ASGI app that adds `Connection: close` to every response once a drain has begun."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app, self.seconds = app, seconds
        self.started = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.started:
            await self.app(scope, receive, send)
            return

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() != b"connection"
                ]
                message = {**message, "headers": [*kept, CLOSE]}
            await send(message)

        await self.app(scope, receive, closing)

    def install(self) -> None:
        """Put the drain before the server's SIGTERM handler. Called at startup, on the event loop,
        after the server installed its handlers (uvicorn does before the lifespan starts)."""
        if self.seconds <= 0 or threading.current_thread() is not threading.main_thread():
            return
        server_handler = signal.getsignal(signal.SIGTERM)
        if not callable(server_handler):
            return
        loop = asyncio.get_running_loop()

        def on_sigterm(number: int, frame: Any) -> None:
            if self.started:  # a second SIGTERM: no more waiting
                server_handler(number, frame)
                return
            self.started = True
            log.info("SIGTERM: draining for %s s (Connection: close) before shutting down", self.seconds)
            # A signal handler may interrupt the loop anywhere: hand the timer to it thread-safely.
            loop.call_soon_threadsafe(loop.call_later, self.seconds, server_handler, number, frame)

        signal.signal(signal.SIGTERM, on_sigterm)
