"""Deep pages in key order, started from noted keys (docs/performance.md, "Deep pages").

`offset=900000` makes the database step over 900,000 index entries before the page, on every such
request. Instead, the first request that goes deep notes the key found every `STEP` rows on its way
(each step is one short read: the key `STEP - 1` rows after the last), and later requests start from
the nearest noted key: `key > noted ... OFFSET (offset - its place)`, fewer than `STEP` rows to step
over.

The noted keys are exact only while the data is as it was. Each database's accelerator gives a
version that moves with every commit that may change the rows, whoever makes it: SQLite's
`PRAGMA data_version` (database/sqlite/accelerator.py); on PostgreSQL and MariaDB the change log's
head together with the identity of the table's change-log triggers (database/change_triggers.py). The
keys are kept with the version read before they were noted, and the version is read again after the
page (only then, for keys noted earlier): head and data version only grow, so the same version after
the page means nothing was committed between the noting and the page, and the page is the one the
whole table gives. A write that lands meanwhile makes the request read the page the ordinary way;
the next request notes anew. Which pages are served this way (key order, no search index, deep
enough) is the executor's decision (query/executor.py); other pages read through the deferred join.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any

from databases import Database

from pb_headless.database.accelerator_interface import DeepPageStatements
from pb_headless.database.connections import held_connection
from pb_headless.database.slots import AFTER, LIMIT, OFFSET

STEP = 1000  # rows between two noted keys: the most a deep page steps over
KEPT = 64  # noted key lists per database (distinct filters), newest use last
YIELD_EVERY = 32  # noting steps between two turns of the event loop for other requests
NOTING_ROUNDS = 3  # notings a request waits for before it reads with the keys there are
NOTING_LIMIT = 60.0  # seconds one noting may take (it runs past the request that started it)

log = logging.getLogger("pb_headless")

VersionReader = Callable[[], Awaitable[Hashable | None]]


class NotedKeys:
    """The keys found every `STEP` rows of one filtered order, at one data version."""

    __slots__ = ("complete", "keys", "version")

    def __init__(self, version: Hashable) -> None:
        self.version = version
        self.keys: list[Any] = []  # keys[i]: the key (i + 1) * STEP - 1 rows from the start
        self.complete = False  # the last key is noted: there are no more STEP rows after it


class Positions:
    """The noted keys of one database, by statement and filter values (at most `KEPT`).

    One task at a time notes the keys of one statement and filter (requests wait for it and start
    from what it noted), so a burst of deep requests after a write notes them once.
    """

    def __init__(self) -> None:
        self._noted: OrderedDict[Hashable, NotedKeys] = OrderedDict()
        self._noting: dict[Hashable, asyncio.Task[None]] = {}  # the notings under way, one per key

    def __len__(self) -> int:
        return len(self._noted)

    async def page(
        self,
        database: Database,
        version_of: VersionReader,
        statements: DeepPageStatements,
        values: dict[Any, Any],
        pk: str,
    ) -> Sequence[Any] | None:
        """The page's rows, started from a noted key; None when this page is not served this way.

        With the keys already noted, the version is read once, after the page: versions only grow,
        so finding the one the keys were noted at means nothing was committed in between."""
        key = (statements.following.sql, _filters(values))
        wanted = values[OFFSET] // STEP
        noted = self._noted.get(key)
        version: Hashable | None = None
        if noted is not None and (len(noted.keys) >= wanted or noted.complete):
            rows = await _from_noted(database, statements, noted, values)
            version = await version_of()
            if version == noted.version:
                self._keep(key, noted)
                return rows
            self._forget(key, noted)
            if version is None:
                return None
        if version is None:
            version = await version_of()
            if version is None:
                return None
        noted = await self._noted_up_to(database, statements, key, version, wanted, values, pk)
        rows = await _from_noted(database, statements, noted, values)
        if rows is None:
            return None
        if await version_of() != version:
            self._forget(key, noted)
            return None  # written meanwhile: the page is read the ordinary way
        return rows

    async def _noted_up_to(
        self,
        database: Database,
        statements: DeepPageStatements,
        key: Hashable,
        version: Hashable,
        wanted: int,
        values: dict[Any, Any],
        pk: str,
    ) -> NotedKeys:
        """The keys at `version`, noted up to `wanted` by a task of their own: on a connection of its
        own and past this request's time limit, so a noting that outlasts one request is finished
        for the next instead of begun again. Requests that need the same keys wait for it. After
        `NOTING_ROUNDS` rounds (writes keep moving the version), what is noted: the page steps over
        the rest."""
        noted = self._at(key, version)
        for _ in range(NOTING_ROUNDS):
            if len(noted.keys) >= wanted or noted.complete:
                break
            running = self._noting.get(key)
            if running is None:
                self._keep(key, noted)  # what is noted is used by the next request, even half done
                running = asyncio.get_running_loop().create_task(
                    _note_within(database, statements, noted, wanted, values, pk)
                )
                self._noting[key] = running
                running.add_done_callback(functools.partial(self._noting_ended, key))
            await asyncio.shield(running)
            noted = self._at(key, version)
        return noted

    def _noting_ended(self, key: Hashable, task: asyncio.Task[None]) -> None:
        if self._noting.get(key) is task:
            del self._noting[key]
        if not task.cancelled() and task.exception() is not None:
            log.warning("pb_headless: noting the keys of a deep page failed: %s", task.exception())

    def _at(self, key: Hashable, version: Hashable) -> NotedKeys:
        noted = self._noted.get(key)
        return noted if noted is not None and noted.version == version else NotedKeys(version)

    def _forget(self, key: Hashable, noted: NotedKeys) -> None:
        if self._noted.get(key) is noted:  # not keys another request noted since
            del self._noted[key]

    def _keep(self, key: Hashable, noted: NotedKeys) -> None:
        self._noted[key] = noted
        self._noted.move_to_end(key)
        while len(self._noted) > KEPT:
            self._noted.popitem(last=False)


async def _from_noted(
    database: Database, statements: DeepPageStatements, noted: NotedKeys, values: dict[Any, Any]
) -> Sequence[Any] | None:
    """The page read from the nearest noted key before it; None when no key lies before it."""
    offset = values[OFFSET]
    place = min(offset // STEP, len(noted.keys))
    if place == 0:
        return None
    arguments = {**values, AFTER: noted.keys[place - 1], OFFSET: offset - place * STEP}
    return await statements.page.fetch(database, statements.page.arguments(arguments))


async def _note_within(
    database: Database,
    statements: DeepPageStatements,
    noted: NotedKeys,
    wanted: int,
    values: dict[Any, Any],
    pk: str,
) -> None:
    # One connection for every step: a connection given back after each would be closed by aiomysql's
    # pool (a SELECT leaves it "in a transaction") and opened anew, 20 ms a step on MariaDB.
    async with asyncio.timeout(NOTING_LIMIT), held_connection(database):
        await note_keys(database, statements, noted, wanted, values, pk)


async def note_keys(
    database: Database,
    statements: DeepPageStatements,
    noted: NotedKeys,
    wanted: int,
    values: dict[Any, Any],
    pk: str,
) -> None:
    """Note keys until `wanted` are noted or the rows run out."""
    steps = 0
    while len(noted.keys) < wanted and not noted.complete:
        if noted.keys:
            statement, arguments = statements.following, {**values, AFTER: noted.keys[-1]}
        else:
            statement, arguments = statements.first, dict(values)
        arguments[LIMIT], arguments[OFFSET] = 1, STEP - 1
        rows = await statement.fetch(database, statement.arguments(arguments))
        if not rows:
            noted.complete = True
            break
        noted.keys.append(rows[0][pk])
        steps += 1
        if steps % YIELD_EVERY == 0:
            await asyncio.sleep(0)


def _filters(values: dict[Any, Any]) -> Hashable:
    return tuple((slot, _hashable(value)) for slot, value in values.items() if slot not in (LIMIT, OFFSET))


def _hashable(value: Any) -> Hashable:
    return tuple(value) if isinstance(value, list) else value
