"""What a database does faster than the generic path, behind one interface (docs/architecture.md).

Three things are accelerated: short reads (SQLite runs them on the loop's thread), count freshness
(SQLite's own data version makes kept counts exact whoever writes) and deep pages (SQLite starts
them from noted keys); search candidates come from an index the database keeps (SQLite's trigram
index of constructor tables). Generic code asks `accelerators.accelerator_of(database)`, never the dialect's
name or a private attribute; `Accelerator` itself is the plain version, what PostgreSQL and MariaDB
use: every answer says "do it the ordinary way".
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
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

    def read_quick(self, database: Database, sql: str, arguments: Sequence[Any]) -> list[Any] | None:
        """The rows of a short read done here and now, or None: run it on the request's connection."""
        return None

    def data_version(self) -> int | None:
        """A version that moves with every commit, whoever makes it; None: there is none."""
        return None

    def steady_version(self, database: Database) -> Hashable | None:
        """`data_version()` where this task reads committed data only (not inside a transaction of its
        own, whose writes no version shows): rows read at it hold while it stays. None: read again."""
        return None

    async def deep_page(
        self, database: Database, statements: DeepPageStatements, values: dict[Any, Any], pk: str
    ) -> Sequence[Any] | None:
        """A deep page in key order started from a noted key; None: read it the ordinary way."""
        return None

    async def ensure_search_index(
        self, database: Database, definition: sa.Table, searchable: tuple[str, ...]
    ) -> str | None:
        """The name of the table's search index, made when missing; None: search reads the table."""
        return None

    async def drop_search_index(self, database: Database, table: str) -> None:
        """Drop the table's search index, if the database keeps one."""

    def close(self) -> None:
        """Let go of what the accelerator holds open (on disconnect)."""


PLAIN = Accelerator()
