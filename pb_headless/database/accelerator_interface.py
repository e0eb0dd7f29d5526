"""What a database does faster than the generic path, behind one interface (docs/architecture.md).

Three things are accelerated: short reads (SQLite runs them on the loop's thread), count freshness
(SQLite's own data version makes kept counts exact whoever writes) and deep pages (started from
noted keys: database/positions.py, on SQLite and, while the change log's triggers are in place, on
PostgreSQL and MariaDB); search is served by an index the database keeps (SQLite's trigram table of
constructor tables, whose candidates the compiler joins; PostgreSQL's `pg_trgm` indexes, which its
planner uses for the same query). Generic code asks `accelerators.accelerator_of(database)`, never
the dialect's name or a private attribute; `Accelerator` itself is the plain version: every answer
says "do it the ordinary way". MariaDB uses `ServerAccelerator` (database/server_accelerator.py),
which only adds deep pages; PostgreSQL's (database/postgresql/accelerator.py) adds its search
indexes to that.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import sqlalchemy as sa
from databases import Database


class RunnableStatement(Protocol):
    """A prepared statement (database/statements.py `Prepared`), as far as this module uses one."""

    @property
    def sql(self) -> str: ...

    def arguments(self, values: dict[Any, Any]) -> Any: ...

    async def fetch(self, database: Database, arguments: Any) -> list[dict[str, Any]]: ...


class DeepPageStatements(Protocol):
    """A deep page's statements (query/compiler.py `compile_seek`): the key `offset` rows from the
    start, the key `offset` rows after `AFTER`, and the page `offset` rows after that key."""

    @property
    def first(self) -> RunnableStatement: ...

    @property
    def following(self) -> RunnableStatement: ...

    @property
    def page(self) -> RunnableStatement: ...


class Accelerator:
    """The plain version: nothing is read on the loop, counts need their time bound, no index."""

    reads_inline = False
    deep_pages = False  # whether `deep_page` may serve a page: else the executor does not ask

    def read_quick(self, database: Database, sql: str, arguments: Sequence[Any]) -> list[Any] | None:
        """The rows of a short read done here and now, or None: run it on the request's connection."""
        return None

    def data_version(self) -> int | None:
        """A version that moves with every commit, whoever makes it; None: there is none."""
        return None

    def share_reads(self) -> None:
        """The reads done here that follow, until `unshare_reads` or the end of this step of the loop,
        see one committed state (SQLite: one read transaction; api/reads.py's list)."""

    def unshare_reads(self) -> None:
        """Ends what `share_reads` began."""

    def arrived(self) -> None:
        """A request of the API has begun (SQLite: its reads join no read transaction begun before)."""

    def steady_version(self, database: Database) -> Hashable | None:
        """`data_version()` where this task reads committed data only (not inside a transaction of its
        own, whose writes no version shows): rows read at it hold while it stays. None: read again."""
        return None

    def thread_turn(self, database: Database) -> AbstractAsyncContextManager[Any]:
        """What a read holds while it runs on the request's connection (SQLite: a turn on the threads,
        sqlite/turns.py); here nothing."""
        return NO_TURN

    async def deep_page(
        self,
        database: Database,
        statements: DeepPageStatements,
        values: dict[Any, Any],
        table: str,
        pk: str,
    ) -> Sequence[Any] | None:
        """A deep page in key order started from a noted key; None: read it the ordinary way."""
        return None

    async def ensure_search_index(
        self, database: Database, definition: sa.Table, searchable: tuple[str, ...]
    ) -> str | None:
        """Make the table's search index when it is missing. The answer is the name of a candidates
        table for the compiler to join (SQLite's), or None: the query stays the ordinary one, which
        the database serves from its own index where it made one (PostgreSQL) or by reading the table."""
        return None

    async def drop_search_index(self, database: Database, table: str) -> None:
        """Drop the table's search index, if the database keeps one."""

    def close(self) -> None:
        """Let go of what the accelerator holds open (on disconnect)."""


NO_TURN: AbstractAsyncContextManager[Any] = contextlib.nullcontext()
PLAIN = Accelerator()
