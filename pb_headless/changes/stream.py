"""The live stream: the feed's entries as server-sent events, as they commit, for as long as the
client listens, the token stays good and the server runs.

The stream reads its own entries from its own cursor (the feed's `read_page`), so what it sends is
exactly what the feed would answer, in order and once; it is only told *when* to read, by the
instance's one poll of the log (`ChangeHub`). It holds no database connection while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from pb_headless.changes.feed import Reader, read_page
from pb_headless.changes.hub import ChangeHub
from pb_headless.http.responses import json_bytes

log = logging.getLogger("pb_headless")

HEARTBEAT = 10.0  # seconds of silence before a comment line keeps proxies from closing the stream
RECHECK = 10.0  # seconds between two checks that the token still reads the object
SEND_TIMEOUT = 30.0  # a client that takes longer to take one event is cut off, never buffered for
CUT_OFF_GRACE = 1.0  # seconds the closing words to a cut-off client may wait for it to read again
BATCH = 100  # entries read at a time
CUT_OFF = b": too slow: cut off; reconnect with Last-Event-ID\n\n"

Emit = Callable[[bytes], Awaitable[None]]
Recheck = Callable[[], Awaitable[Reader | None]]


def event_bytes(entry: dict[str, Any]) -> bytes:
    return b"event: %s\nid: %s\ndata: %s\n\n" % (
        entry["op"].encode(),
        entry["cursor"].encode(),
        json_bytes(entry),
    )


class StreamSession:
    """One client's stream: where it is in the log, and how it learns of new entries."""

    def __init__(
        self,
        hub: ChangeHub,
        reader: Reader,
        since: int,
        wake: asyncio.Event,
        recheck: Recheck,
    ) -> None:
        self.hub, self.reader, self.cursor, self.wake = hub, reader, since, wake
        self.recheck = recheck
        self.heartbeat, self.recheck_every = HEARTBEAT, RECHECK
        self.gone = False  # the client left: stop at the next step, never in the middle of a query

    def leave(self) -> None:
        self.gone = True
        self.wake.set()

    @property
    def over(self) -> bool:
        return self.gone or self.hub.closing

    async def run(self, emit: Emit) -> None:
        await emit(b"retry: 2000\n: stream open\n\n")
        last_sent = time.monotonic()
        next_check = last_sent + self.recheck_every
        while not self.over:
            self.wake.clear()  # cleared before reading: a change after the read sets it again
            page = await read_page(self.reader, self.cursor, BATCH)
            for entry in page.entries:
                if self.over:
                    return
                await emit(event_bytes(entry))
                last_sent = time.monotonic()
            self.cursor = page.next
            if page.has_more:
                continue
            now = time.monotonic()
            wait = max(0.0, min(last_sent + self.heartbeat, next_check) - now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), wait)
            if self.over:
                return
            now = time.monotonic()
            if now - last_sent >= self.heartbeat:
                await emit(b": keep-alive\n\n")
                last_sent = now
            if now >= next_check:
                reader = await self.recheck()
                if reader is None:  # the token was revoked, or no longer reads the object
                    return
                self.reader, next_check = reader, now + self.recheck_every


class EventStream(Response):
    """`text/event-stream` written by hand: the session's events, ended when the client leaves."""

    media_type = "text/event-stream"

    def __init__(self, session: StreamSession, release: Callable[[], None], headers: dict[str, str]) -> None:
        self.session = session
        self.release = release
        self.status_code = 200
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            cut_off = False
            if scope.get("method") != "HEAD":
                cut_off = await self._events(receive, send)
            await self._end(send, cut_off)
        finally:
            self.release()

    async def _end(self, send: Send, cut_off: bool) -> None:
        """The end of the body. A client that was cut off has not read for SEND_TIMEOUT seconds, and
        the server writes nothing more while it does not (its buffer is full): the closing comment is
        given a moment, then the response is left unfinished, and the server closes the connection
        once what it holds is written out (uvicorn logs "ASGI callable returned without completing
        response"). The stream's slot is free either way; the client reconnects with Last-Event-ID."""
        end = {"type": "http.response.body", "body": CUT_OFF if cut_off else b"", "more_body": False}
        with contextlib.suppress(Exception), anyio.move_on_after(CUT_OFF_GRACE if cut_off else SEND_TIMEOUT):
            await send(end)  # the client may be gone already

    async def _events(self, receive: Receive, send: Send) -> bool:
        """Send the session's events until it is over; True when the client was cut off as too slow."""

        async def emit(data: bytes) -> None:
            with anyio.fail_after(SEND_TIMEOUT):
                await send({"type": "http.response.body", "body": data, "more_body": True})

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                # Not a cancellation: one in the middle of a SQLite read would leave its lock behind.
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.session.leave()

            group.start_soon(watch)
            try:
                await self.session.run(emit)
            except TimeoutError:
                log.info("pb_headless: a change stream's client was too slow and was cut off")
                return True
            except Exception:  # the database went away: the client reconnects with Last-Event-ID
                log.warning("pb_headless: a change stream ended on an error", exc_info=True)
            finally:
                group.cancel_scope.cancel()
        return False
