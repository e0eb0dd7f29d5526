"""The live stream: the feed's entries as server-sent events, as they commit, for as long as the
client listens, the token stays good and the server runs.

The stream reads its own entries from its own cursor (the feed's `read_page`), so what it sends is
exactly what the feed would answer, in order and once; it is only told *when* to read, by the
instance's one poll of the log (`StreamHub`). It holds no database connection while it waits. The
response that writes it to the client is the API layer's (api/event_stream.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pb_headless.changes.feed import FeedPage, Reader, read_page, render_page
from pb_headless.changes.hub import StreamHub
from pb_headless.http.responses import json_bytes

HEARTBEAT = 10.0  # seconds of silence before a comment line keeps proxies from closing the stream
# Seconds between two checks that the token still reads the object as it did (disabled, deleted,
# expired, reissued, scope removed, object or field unpublished), while waiting and while sending
# alike: a stream ends, or drops a field, within this plus one page (docs/changes.md promises 10 s).
RECHECK = 5.0
BATCH = 100  # entries read at a time
PAGE_EVERY = 0.2  # seconds at least between two pages of one stream's backlog: 500 entries a second
LANE_WAIT = 1.0  # seconds a stream waits for the backlog lane before it looks at its other duties

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
        hub: StreamHub,
        reader: Reader,
        since: int,
        wake: asyncio.Event,
        recheck: Recheck,
    ) -> None:
        self.hub, self.reader, self.cursor, self.wake = hub, reader, since, wake
        self.recheck = recheck
        self.heartbeat, self.recheck_every = HEARTBEAT, RECHECK
        self.gone = False  # the client left: stop at the next step, never in the middle of a query
        self.last_sent = self.next_check = 0.0

    def leave(self) -> None:
        self.gone = True
        self.wake.set()

    @property
    def over(self) -> bool:
        return self.gone or self.hub.closing

    async def run(self, emit: Emit) -> None:
        await emit(b"retry: 2000\n: stream open\n\n")
        self.last_sent = time.monotonic()
        self.next_check = self.last_sent + self.recheck_every
        while not self.over:
            self.wake.clear()  # cleared before reading: a change after the read sets it again
            started = time.monotonic()
            page = await self._read(emit)
            if page is None or not await self._send(page, emit):
                return
            if page.has_more or self.cursor != page.next:  # a backlog: the next page, paced
                await self._rest(started + PAGE_EVERY - time.monotonic())
            elif not await self._idle(emit):
                return

    async def _read(self, emit: Emit) -> FeedPage | None:
        """The next entries: from what the instance's poll read, when this stream is caught up;
        otherwise from the log, in the instance's one backlog lane. None ends the stream."""
        table = self.reader.spec.table.name
        shared = self.hub.recent.latest_after(table, self.cursor, BATCH, self.reader.spec.name)
        if shared is not None:
            changes, following, more = shared
            rendered = await render_page(self.reader, self.cursor, changes, self.hub.recent.render)
            return FeedPage([entry for _, entry in rendered], following, more, [at for at, _ in rendered])
        if not await self._enter_lane(emit):
            return None
        try:
            started = time.monotonic()
            page = await read_page(self.reader, self.cursor, BATCH)
            # The lane rests as long as the page took: catching up takes at most half the instance.
            await asyncio.sleep(time.monotonic() - started)
        finally:
            self.hub.replay_lane.release()
        return page

    async def _enter_lane(self, emit: Emit) -> bool:
        """Wait for the backlog lane, still ending on time and keeping the connection alive: False
        when the stream is to end."""
        while True:
            try:
                await asyncio.wait_for(self.hub.replay_lane.acquire(), LANE_WAIT)
                return True
            except TimeoutError:
                if self.over or not await self._check_if_due():
                    return False
                await self._keep_alive(emit)

    async def _send(self, page: FeedPage, emit: Emit) -> bool:
        """The page's entries; False ends the stream. When a check finds the object compiled anew (a
        field unpublished), the rest of the page is dropped and read again under the new rules."""
        for entry, position in zip(page.entries, page.positions, strict=True):
            if self.over:
                return False
            before = self.reader
            if not await self._check_if_due():
                return False
            if self.reader.spec is not before.spec or self.reader.plan != before.plan:
                return True  # the cursor stays at the last entry sent
            await emit(event_bytes(entry))
            self.cursor, self.last_sent = position, time.monotonic()
        self.cursor = page.next
        return True

    async def _idle(self, emit: Emit) -> bool:
        """Wait for a change, a heartbeat or the next check; False ends the stream."""
        wait = max(0.0, min(self.last_sent + self.heartbeat, self.next_check) - time.monotonic())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wake.wait(), wait)
        if self.over:
            return False
        await self._keep_alive(emit)
        return await self._check_if_due()

    async def _keep_alive(self, emit: Emit) -> None:
        if time.monotonic() - self.last_sent >= self.heartbeat:
            await emit(b": keep-alive\n\n")
            self.last_sent = time.monotonic()

    async def _check_if_due(self) -> bool:
        """The token and the object as they are now, when the last check is old enough; False when
        the token no longer reads the object."""
        if time.monotonic() < self.next_check:
            return True
        reader = await self.recheck()
        if reader is None:  # the token was revoked, or no longer reads the object
            return False
        self.reader, self.next_check = reader, time.monotonic() + self.recheck_every
        return True

    async def _rest(self, seconds: float) -> None:
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended(), seconds)

    async def _ended(self) -> None:
        while not self.over:
            self.wake.clear()
            await self.wake.wait()
