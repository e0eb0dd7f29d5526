"""SQLite's accelerator: reads on the loop's thread, its data version, noted positions, the trigram index."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.database import internals
from pb_headless.database.accelerator_interface import NO_TURN, Accelerator, DeepPageStatements
from pb_headless.database.positions import Positions
from pb_headless.database.sqlite import search_index
from pb_headless.database.sqlite.inline import InlineReads
from pb_headless.database.sqlite.turns import ThreadTurns


class SQLiteAccelerator(Accelerator):
    """`inline` is there for a SQLite file with kept connections (sqlite/pool.py), None otherwise."""

    def __init__(self, inline: InlineReads | None) -> None:
        self.inline = inline
        self.reads_inline = self.deep_pages = inline is not None
        self.positions = Positions()
        self.turns = ThreadTurns()

    def read_quick(self, database: Database, sql: str, arguments: Sequence[Any]) -> list[Any] | None:
        # A task inside a transaction must see its own writes: only its own connection has them.
        if self.inline is None or internals.in_transaction(internals.held_by_task(database)):
            return None
        return self.inline.fetchall(sql, arguments)

    def thread_turn(self, database: Database) -> AbstractAsyncContextManager[Any]:
        # Inside its own transaction a task reads without a turn (sqlite/turns.py says why).
        if internals.in_transaction(internals.held_by_task(database)):
            return NO_TURN
        return self.turns.turn()

    def data_version(self) -> int | None:
        return None if self.inline is None else self.inline.data_version()

    def share_reads(self) -> None:
        if self.inline is not None:
            self.inline.share()

    def unshare_reads(self) -> None:
        if self.inline is not None:
            self.inline.unshare()

    def arrived(self) -> None:
        if self.inline is not None:
            self.inline.arrived()

    def steady_version(self, database: Database) -> Hashable | None:
        if self.inline is None or internals.in_transaction(internals.held_by_task(database)):
            return None
        return self.inline.steady_version()

    async def deep_page(
        self,
        database: Database,
        statements: DeepPageStatements,
        values: dict[Any, Any],
        table: str,
        pk: str,
    ) -> Sequence[Any] | None:
        inline = self.inline
        if inline is None:
            return None

        async def version() -> int | None:
            return inline.data_version()

        return await self.positions.page(database, version, statements, values, pk)

    async def ensure_search_index(
        self, database: Database, definition: sa.Table, searchable: tuple[str, ...]
    ) -> str | None:
        return await search_index.ensure_search_index(database, definition, searchable)

    async def drop_search_index(self, database: Database, table: str) -> None:
        await search_index.drop_search_index(database, table)

    def close(self) -> None:
        if self.inline is not None:
            self.inline.close()
