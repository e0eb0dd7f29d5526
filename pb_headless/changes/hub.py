"""One instance's part of the change log: its triggers kept in step with the catalog, its one poll of
the log for all its open streams (whose entries the streams that are caught up share, `recent.py`),
the bounds on streams per token and per instance, the one lane in which streams read a backlog,
pruning now and then, and ending every stream when the server shuts down."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.changes.log import bounds, entries_between
from pb_headless.changes.recent import RecentChanges
from pb_headless.changes.retention import prune, retention_days
from pb_headless.changes.triggers import Tables, sync_triggers
from pb_headless.errors import RateLimited, ServiceUnavailable
from pb_headless.tables import changes

log = logging.getLogger("pb_headless")

POLL_INTERVAL = 0.25  # seconds between two looks at the head while streams are open
MAX_STREAMS_PER_TOKEN = 5
MAX_STREAMS = 100  # open streams per instance (HeadlessAPI's `max_streams`); past it: 503
FULL_RETRY_AFTER = 15  # seconds a stream refused for the instance's bound is told to wait
POLL_READ = 2000  # entries one poll reads for all streams; a longer burst is read by each stream
PRUNE_EVERY = 3600.0  # seconds; the first run comes one period after the instance starts

_HUBS: weakref.WeakSet[ChangeHub] = weakref.WeakSet()


class ChangeHub:
    """Created by `HeadlessAPI`; `enabled=False` (the `change_log` option) installs no trigger."""

    def __init__(
        self,
        database: Database,
        authenticator: Any,
        *,
        enabled: bool = True,
        poll_interval: float = POLL_INTERVAL,
        max_streams: int = MAX_STREAMS,
    ) -> None:
        if max_streams < 1:
            raise ValueError("max_streams is at least 1")
        self.database = database
        self.authenticator = authenticator  # pb_headless.auth.Authenticator: streams re-check their token
        self.enabled = enabled
        self.poll_interval = poll_interval
        self.max_streams = max_streams
        self.closing = False
        self._synced: Any = None
        # The tables whose triggers the last sync saw in place: their rows' changes all reach the log,
        # so a list of them may take its ETag from the log (api/list_tags.py).
        self.covered: frozenset[str] = frozenset()
        self._sync_lock = asyncio.Lock()
        self._streams: dict[int, int] = {}  # token id → open streams on this instance
        self._waiters: dict[str, set[asyncio.Event]] = {}  # table → one event per open stream
        self.recent = RecentChanges()  # what the last polls read, for the streams caught up
        # Streams read a backlog one page at a time per instance, so that catching up never takes
        # more than this one lane of the instance's time (stream.py paces each page).
        self.replay_lane = asyncio.Semaphore(1)
        self._poller: asyncio.Task[None] | None = None
        self._next_prune = time.monotonic() + PRUNE_EVERY
        self._pruning: asyncio.Task[int] | None = None
        _HUBS.add(self)

    # -- triggers and pruning, once per catalog version ------------------------------------------
    def due(self, version: Any) -> bool:
        """Whether `follow` has anything to do for this catalog version: the version moved, or pruning
        may be due. A plain check, so that a request whose version did not move (nearly all of them)
        makes no coroutine for it."""
        return self.enabled and (self._synced != version or time.monotonic() >= self._next_prune)

    async def follow(self, version: Any, tables: Tables, settings: Mapping[str, str]) -> None:
        """Install and remove triggers when the catalog version moved; start pruning when it is due."""
        if not self.enabled:
            return
        if self._synced != version:
            async with self._sync_lock:
                if self._synced != version:
                    self.covered = await sync_triggers(self.database, tables)
                    self._synced = version
        if time.monotonic() >= self._next_prune and (self._pruning is None or self._pruning.done()):
            self._next_prune = time.monotonic() + PRUNE_EVERY
            self._pruning = asyncio.create_task(self._prune(retention_days(dict(settings))))

    async def _prune(self, days: int) -> int:
        try:
            return await prune(self.database, days)
        except Exception:  # the next run tries again; a request must never fail for it
            log.warning("pb_headless: pruning the change log failed", exc_info=True)
            return 0

    # -- open streams ------------------------------------------------------------------------------
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
                now = (await bounds(self.database)).head
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
        read = await entries_between(self.database, after, head, POLL_READ + 1, tables)
        if len(read) > POLL_READ:  # a burst: each stream reads its own, paced
            self.recent.advance(after, head, tables, None)
            return await _moved_tables(self.database, after, head)
        self.recent.advance(after, head, tables, read)
        return {change.table for change in read}

    def _wake(self, tables: set[str]) -> None:
        for table in tables:
            for event in self._waiters.get(table, ()):
                event.set()


async def _moved_tables(database: Database, after: int, head: int) -> set[str]:
    query = (
        sa.select(changes.c.table_name)
        .where(changes.c.position > after, changes.c.position <= head)
        .distinct()
    )
    return {row[0] for row in await database.fetch_all(query)}


def close_all_streams() -> None:
    """Every instance's streams end: what the server's shutdown signal calls (`watch_server_exit`)."""
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    for hub in list(_HUBS):
        if loop is not None:
            loop.call_soon_threadsafe(hub.close)
        else:
            hub.close()


def watch_server_exit() -> None:
    """Servers such as uvicorn wait for open responses to finish before they tell the app to shut
    down, and a stream never finishes by itself: so the process's SIGTERM and SIGINT handlers (the
    server's) are wrapped once, to end every stream before the server's own handler runs."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGINT):
        current = signal.getsignal(number)
        if not callable(current) or getattr(current, "pb_headless_wrapped", False):
            continue
        signal.signal(number, _ending_streams_first(current))


def _ending_streams_first(handler: Callable[[int, Any], Any]) -> Callable[[int, Any], Any]:
    def handle(number: int, frame: Any) -> Any:
        close_all_streams()
        return handler(number, frame)

    handle.pb_headless_wrapped = True  # type: ignore[attr-defined]
    return handle
