"""`meta.total` without a full count on every page: counts kept per data version, with a time bound.

Every write made through the library moves the shared data version (`pb_state` row 2) in the same
transaction as the write; every request reads that version with its token. A count is reused only
while the version it was taken at is still the current one, so totals are exact after every write
made through the API, on every instance. A write that bypasses the library (the host's own SQL, a
migration, another program) does not move the version: a count older than `STALE_AFTER` seconds
(or 20 times as long as it took to count, when that is longer) is taken again in the background by
the next request that needs it, and served from then on (docs/performance.md).

On SQLite the version also holds SQLite's own `PRAGMA data_version`, which moves with every commit of
any connection (database/sqlite/inline.py): a write that bypasses the library makes the next request count
again, so counts are exact there and need no time bound.

A count the database stopped at its time budget (a search's, database/budget.py) is kept too, as "past
the budget", under the same version and time bound: the next requests answer their estimate at once
instead of each spending the budget again on a count that will not finish (docs/performance-notes.md,
"Search on MariaDB").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable

from pb_headless.database.budget import OverBudget
from pb_headless.database.database_errors import is_over_budget

log = logging.getLogger("pb_headless")

STALE_AFTER = 5.0  # seconds a count may lag behind writes that bypass the library
RECOUNT_FACTOR = 20  # a count that takes long is retaken at most every 20 times its duration
KEPT_COUNTS = 1024  # distinct filtered counts kept per API object
KEPT_COUNT_BYTES = 1024 * 1024  # and their keys' size: a key holds the count's SQL and its values
ENTRY_BYTES = 200  # what an entry holds beside its key's text and values (tracemalloc, PostgreSQL)
VALUE_BYTES = 64  # one of a key's values (an int, a short string, a name and value pair) and its place


class Totals:
    """The counts of one database, newest use last; an entry is (data version, taken at, total).

    One count runs at a time per key and version. After a write (a new version) requests wait for
    it; when only the time bound ran out, the request that notices starts a recount in the
    background and every request keeps the previous total until the new one is there, so no
    request waits for a count it did not need.
    """

    def __init__(self) -> None:
        # (version, taken at, total or None when the count passed its budget, seconds it took)
        self._counts: OrderedDict[Hashable, tuple[Hashable, float, int | None, float]] = OrderedDict()
        self._weights: dict[Hashable, int] = {}  # each kept key's bytes (`key_bytes`)
        self.bytes = 0
        self._running: dict[tuple[Hashable, Hashable], asyncio.Future[int]] = {}
        self._background: set[asyncio.Task[int]] = set()

    async def total(
        self,
        key: Hashable,
        version: Hashable | None,
        count: Callable[[], Awaitable[int]],
        exact: bool = False,
    ) -> int:
        """The count of `key` at `version`; `exact`: the version moves with every write, whoever
        makes it, so a kept count never needs the time bound. `OverBudget` when the count passed its
        budget at this version, here or in an earlier request."""
        if version is None:
            return await count()
        found = self._counts.get(key)
        if found is not None and found[0] == version:
            self._counts.move_to_end(key)
            age, took = time.monotonic() - found[1], found[3]
            stale = not exact and age >= max(STALE_AFTER, RECOUNT_FACTOR * took)
            if found[2] is None:  # past its budget: tried again in a request, under its budget, once stale
                if not stale:
                    raise OverBudget()
            else:
                if stale and (key, version) not in self._running:
                    self._recount_later(key, version, count)
                return found[2]
        running = self._running.get((key, version))
        if running is not None:
            try:
                return await asyncio.shield(running)
            except _CutOff:  # the request counting was cut off (its time limit, its client): count here
                pass
        return await self._count(key, version, count)

    def size(self) -> int:
        return len(self._counts)

    def kept_keys(self) -> list[Hashable]:
        """The keys of the counts kept now, oldest use first (what a test or an operator looks at)."""
        return list(self._counts)

    async def settled(self) -> None:
        """Wait for the recounts under way (for tests and orderly shutdowns)."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def _recount_later(self, key: Hashable, version: Hashable, count: Callable[[], Awaitable[int]]) -> None:
        # Its own task, so it runs on a connection of its own, not the request's.
        loop = asyncio.get_running_loop()
        self._running[(key, version)] = loop.create_future()  # taken before the task first runs
        task = loop.create_task(self._count(key, version, count))
        self._background.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[int]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("pb_headless: a background recount failed: %s", task.exception())

    async def _count(self, key: Hashable, version: Hashable, count: Callable[[], Awaitable[int]]) -> int:
        future = self._running.get((key, version))  # set already when this is a background recount
        if future is None:
            future = self._running[(key, version)] = asyncio.get_running_loop().create_future()
        taken = time.monotonic()
        try:
            total = await count()
        except BaseException as error:
            over = isinstance(error, OverBudget) or is_over_budget(error)
            # A cancel is this request's own: those sharing the count must not hear it as theirs.
            future.set_exception(
                OverBudget() if over else _CutOff() if isinstance(error, asyncio.CancelledError) else error
            )
            future.exception()  # whoever waits sees it; nobody waiting is not an error of its own
            if over:
                self._keep(key, version, taken, None)
            raise
        finally:
            del self._running[(key, version)]
        future.set_result(total)
        self._keep(key, version, taken, total)
        return total

    def _keep(self, key: Hashable, version: Hashable, taken: float, total: int | None) -> None:
        self._counts[key] = (version, taken, total, time.monotonic() - taken)
        self._counts.move_to_end(key)
        if key not in self._weights:
            self._weights[key] = weight = key_bytes(key)
            self.bytes += weight
        while len(self._counts) > KEPT_COUNTS or (self.bytes > KEPT_COUNT_BYTES and len(self._counts) > 1):
            evicted, _ = self._counts.popitem(last=False)
            self.bytes -= self._weights.pop(evicted)


def key_bytes(key: Hashable) -> int:
    """What a count's key holds, roughly: its SQL text and its values (MariaDB's: name and value
    pairs). On PostgreSQL a long `in` list makes both long (a `CAST($n AS BIGINT)` per value), so a
    bound in entries alone let 1,024 keys hold megabytes."""
    return ENTRY_BYTES + _part_bytes(key)


def _part_bytes(part: object) -> int:
    if isinstance(part, (str, bytes)):
        return len(part)
    if isinstance(part, tuple):
        return sum(VALUE_BYTES + _part_bytes(item) for item in part)
    return 0


class _CutOff(Exception):
    """The count another request was making for this one was cut off."""
