"""Leaving a proxy's rotation without a 502: the site drains for a while after SIGTERM.

A proxy such as nginx keeps idle connections to each instance and reuses them. When the server closes
a connection in the same instant the proxy sends a request on it, the request meets a closed socket;
nginx retries only idempotent methods there, so a POST would get nginx's own 502.

So, with `PB_DRAIN_SECONDS` set (docs/deployment.md, "Restarts and outages"), SIGTERM first starts a
drain. The site stops listening at once: a new connection is refused, which nginx retries on another
instance whatever the method (nothing was sent), and it marks this one as down. The connections
already open are still served for that many seconds, every answer with `Connection: close`, so the
proxy keeps none of them, and those it left idle reach the proxy's own idle timeout and are closed from
its side. Only then does the server's own SIGTERM handler run: it finishes the requests in flight and
exits. A second SIGTERM during the drain stops at once, as without it. SIGINT (Ctrl+C) never drains.

Why stop listening first rather than last: during the drain every answer closes its connection, so the
proxy opens a new one for each request it sends here. Stopped at the end, the server would close
connections it had just accepted, with a request already sent on them and not yet read (a 502 for a
POST, in 4 of 54 restarts under load). At the start, the proxy is still reusing the connections it
keeps, and opens almost none.
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
        # uvicorn's handler is its `Server.handle_exit`: the server's listening `asyncio.Server`s are
        # `servers` of the same object, made once the lifespan has started (so read at the signal).
        # Another server's handler has none, and the site keeps listening through the drain.
        owner = getattr(server_handler, "__self__", None)

        def begin(number: int, frame: Any) -> None:
            for server in getattr(owner, "servers", None) or []:
                server.close()  # stops listening; the connections it accepted stay open
            loop.call_later(self.seconds, server_handler, number, frame)

        def on_sigterm(number: int, frame: Any) -> None:
            if self.started:  # a second SIGTERM: no more waiting
                server_handler(number, frame)
                return
            self.started = True
            log.info(
                "SIGTERM: not listening; draining the open connections for %s s (Connection: close) "
                "before shutting down",
                self.seconds,
            )
            # A signal handler may interrupt the loop anywhere: hand the work to it thread-safely.
            loop.call_soon_threadsafe(begin, number, frame)

        signal.signal(signal.SIGTERM, on_sigterm)
