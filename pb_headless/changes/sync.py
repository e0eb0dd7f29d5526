"""Keeping the change log's triggers in step with the published objects, once per catalog version,
and pruning it now and then: one `TriggerSync` per `HeadlessAPI` (docs/changes.md, "The triggers").

A request asks `due` (a plain check, no coroutine) and, only when the catalog version moved or
pruning is due, `follow`. The tables whose triggers the last sync saw in place are `covered`: their
rows' changes all reach the log, so a list of them may take its ETag from the log (api/list_tags.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from pb_headless.changes.log import ChangeLog, Tables
from pb_headless.changes.retention import retention_days
from pb_headless.changes.visibility import WatchedTable, watched_tables
from pb_headless.state.snapshot import Snapshot

log = logging.getLogger("pb_headless")

PRUNE_EVERY = 3600.0  # seconds; the first run comes one period after the instance starts


class TriggerSync:
    """Created by `HeadlessAPI`; `enabled=False` (the `change_log` option) installs no trigger."""

    def __init__(self, change_log: ChangeLog, *, enabled: bool = True) -> None:
        self.log = change_log
        self.enabled = enabled
        self._synced: Any = None
        self.covered: frozenset[str] = frozenset()
        self._sync_lock = asyncio.Lock()
        self._next_prune = time.monotonic() + PRUNE_EVERY
        self._pruning: asyncio.Task[int] | None = None

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
                    self.covered = await self.log.sync_triggers(tables)
                    self._synced = version
        if time.monotonic() >= self._next_prune and (self._pruning is None or self._pruning.done()):
            self._next_prune = time.monotonic() + PRUNE_EVERY
            self._pruning = asyncio.create_task(self._prune(retention_days(dict(settings))))

    async def follow_catalog(self, snapshot: Snapshot) -> None:
        """Triggers on exactly the tables the snapshot's catalog publishes (several objects may publish
        one table), installed or removed once per version."""
        tables = snapshot.derive("changes.tables", _published_tables)  # once per version, not per request
        await self.follow(snapshot.version, tables, snapshot.settings)

    async def _prune(self, days: int) -> int:
        try:
            return await self.log.prune(days)
        except Exception:  # the next run tries again; a request must never fail for it
            log.warning("pb_headless: pruning the change log failed", exc_info=True)
            return 0


def _published_tables(snapshot: Snapshot) -> dict[str, WatchedTable]:
    """Published table → its key column and the rows each object publishing it serves."""
    return watched_tables(snapshot.catalog)
