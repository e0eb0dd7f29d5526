"""One instance's live streams: its one poll of the change log for all of them (whose entries the
streams that are caught up share, `recent.py`), the bounds on streams per token and per instance, and
the one lane in which streams read a backlog. `close` ends every stream (the server's shutdown,
pb_headless/http/exit_signal.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from pb_headless.changes.log import ChangeLog
from pb_headless.changes.recent import RecentChanges
from pb_headless.errors import RateLimited, ServiceUnavailable

log = logging.getLogger("pb_headless")

POLL_INTERVAL = 0.25  # seconds between two looks at the head while streams are open
MAX_STREAMS_PER_TOKEN = 5
MAX_STREAMS = 100  # open streams per instance (HeadlessAPI's `max_streams`); past it: 503
FULL_RETRY_AFTER = 15  # seconds a stream refused for the instance's bound is told to wait
POLL_READ = 2000  # entries one poll reads for all streams; a longer burst is read by each stream


class StreamHub:
    """Created by `HeadlessAPI`, one per instance."""

    def __init__(
        self,
        change_log: ChangeLog,
        authenticator: Any,
        *,
        poll_interval: float = POLL_INTERVAL,
        max_streams: int = MAX_STREAMS,
    ) -> None:
        if max_streams < 1:
            raise ValueError("max_streams is at least 1")
        self.log = change_log
        self.authenticator = authenticator  # pb_headless.auth.Authenticator: streams re-check their token
        self.poll_interval = poll_interval
        self.max_streams = max_streams
        self.closing = False
        self._streams: dict[int, int] = {}  # token id → open streams on this instance
        self._waiters: dict[str, set[asyncio.Event]] = {}  # table → one event per open stream
        self.recent = RecentChanges()  # what the last polls read, for the streams caught up
        # Streams read a backlog one page at a time per instance, so that catching up never takes
        # more than this one lane of the instance's time (stream.py paces each page).
        self.replay_lane = asyncio.Semaphore(1)
        self._poller: asyncio.Task[None] | None = None

    @property
    def open_streams(self) -> int:
        """How many streams this instance is serving now."""
        return sum(self._streams.values())

    @contextlib.contextmanager
    def stream_slot(self, token_id: int, table: str) -> Iterator[asyncio.Event]:
        """A place for one stream: 429 past the bound per token, 503 past the instance's; the event is
        set when `table` moved."""
        if self._streams.get(token_id, 0) >= MAX_STREAMS_PER_TOKEN:
            raise RateLimited(
                15, f"At most {MAX_STREAMS_PER_TOKEN} streams may be open per token; close one first."
            )
        if self.open_streams >= self.max_streams:
            raise ServiceUnavailable(
                f"This server has {self.max_streams} streams open, its most; retry in {FULL_RETRY_AFTER} "
                "seconds (another instance may have room).",
                retry_after=FULL_RETRY_AFTER,
            )
        self._streams[token_id] = self._streams.get(token_id, 0) + 1
        event = asyncio.Event()
        self._waiters.setdefault(table, set()).add(event)
        self._start_polling()
        try:
            yield event
        finally:
            self._streams[token_id] -= 1
            if not self._streams[token_id]:
                del self._streams[token_id]
            waiting = self._waiters.get(table, set())
            waiting.discard(event)
            if not waiting:
                self._waiters.pop(table, None)
                self.recent.forget(table)

    def close(self) -> None:
        """End every stream (they see `closing` when woken) and stop polling."""
        self.closing = True
        for events in self._waiters.values():
            for event in events:
                event.set()
        if self._poller is not None:
            self._poller.cancel()

    def _start_polling(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll())

    async def _poll(self) -> None:
        """One look at the head per interval for every stream of this instance; when it moved, one
        read of the new entries of every followed table, kept in `recent`, and the streams whose table
        moved are woken."""
        head: int | None = None
        while self._waiters and not self.closing:
            try:
                now = (await self.log.bounds()).head
                if head is None:
                    self.recent.advance(now, now, list(self._waiters), [])
                elif now > head:
                    self._wake(await self._read_new(head, now))
                head = now if head is None else max(head, now)
            except Exception:  # the database is away: the streams wait, the next look tries again
                log.warning("pb_headless: reading the change log's head failed", exc_info=True)
            await asyncio.sleep(self.poll_interval)

    async def _read_new(self, after: int, head: int) -> set[str]:
        """The followed tables that moved in `(after, head]`, their entries kept in `recent`."""
        tables = list(self._waiters)
        read = await self.log.entries_between(after, head, POLL_READ + 1, tables)
        if len(read) > POLL_READ:  # a burst: each stream reads its own, paced
            self.recent.advance(after, head, tables, None)
            return await self.log.moved_tables(after, head)
        self.recent.advance(after, head, tables, read)
        return {change.table for change in read}

    def _wake(self, tables: set[str]) -> None:
        for table in tables:
            for event in self._waiters.get(table, ()):
                event.set()
