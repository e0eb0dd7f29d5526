"""One backend object per database: what differs between SQLite, PostgreSQL and MariaDB, by name.

Code outside `database/` asks the backend for a capability ("lock the due rows", "guard this unique
field", "which tables exist") and never compares dialect names; a fourth database is one more
subclass here and one more entry in `_BACKENDS` (docs/architecture.md, "The database backend").
`backend_for` opens one per host `Database` and hands the same one to every caller (`HeadlessAPI`
opens it at start; code that is handed only the `Database`, the webhook worker and the migration
commands, finds it the same way), so the per-database state it holds is kept once.

This is the first stage of the move: the capabilities listed here are the ones already served from
a backend; the rest of the dialect branches are listed in tests/unit/test_import_structure.py.
"""

from __future__ import annotations

from typing import Any, ClassVar
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from databases import Database

from pb_headless.database import explain

# URL scheme (as `databases` reads it) → the backend's name. MariaDB answers as `mysql`.
_NAMES = {"sqlite": "sqlite", "postgresql": "postgresql", "postgres": "postgresql", "mysql": "mysql",
          "mariadb": "mysql"}  # fmt: skip
# The async drivers SQLAlchemy takes for the same database, for reflection and migrations.
ASYNC_DRIVERS = ("asyncpg", "aiomysql", "asyncmy", "aiosqlite")


class Backend:
    """The capabilities every backend offers; a subclass sets the facts and overrides the operations."""

    name: ClassVar[str]  # sqlite | postgresql | mysql, as SQLAlchemy names the dialect
    async_driver: ClassVar[str]  # the SQLAlchemy async driver for reflection and migrations
    # Facts (Django's `features`): what the database can do, asked by name.
    locks_rows: ClassVar[bool] = True  # FOR UPDATE; SQLite has one writer and locks the database
    skip_locked_of: ClassVar[bool] = False  # FOR UPDATE SKIP LOCKED OF <table>
    # How writers of one `unique` field take turns (api/uniqueness.py): a named lock held around the
    # whole transaction (MariaDB), a lock held to the end of the transaction (PostgreSQL), or
    # neither, when every write transaction already takes the database's write lock (SQLite).
    unique_by_named_lock: ClassVar[bool] = False
    takes_unix_socket: ClassVar[bool] = False  # the URL's `unix_socket` goes to the driver as is
    unique_by_transaction_lock: ClassVar[bool] = False
    tables_query: ClassVar[str]  # the names of the tables in the current schema
    table_exists_query: ClassVar[str]  # count(*) of tables called :name in the current schema

    def __init__(self, database: Database) -> None:
        self.database = database
        self.made_indexes: set[str] = set()  # implied indexes this instance made or found (constructor)

    def driver_url(self, driver: str | None) -> str:
        """The `backend+driver` name SQLAlchemy needs for this database (the one URL-to-driver map):
        the host's own driver when it is an async one SQLAlchemy knows, else the backend's."""
        return f"{self.name}+{driver if driver in ASYNC_DRIVERS else self.async_driver}"

    def lock_due_rows(self, query: sa.Select, table: sa.Table) -> sa.Select:
        """`query` locking the rows it reads from `table` and passing rows another claimer holds."""
        return query

    async def lock_for_writing(self, write_first: Any) -> None:
        """Called first in a transaction that reads before it writes; SQLite takes its write lock."""

    async def existing_tables(self) -> set[str]:
        """The names of the tables in the database's current schema."""
        return {row[0] for row in await self.database.fetch_all(self.tables_query)}

    async def table_exists(self, name: str) -> bool:
        return bool(await self.database.fetch_val(self.table_exists_query, {"name": name}))

    # The compiled read (query/compiler.py, query/seek.py): facts that change a list's SQL.
    nulls_sort_low: ClassVar[bool] = True  # NULL orders before every value ascending (not PostgreSQL)
    widens_number_parameters: ClassVar[bool] = False  # a number's parameter cast to the widest type
    folds_text_in_python: ClassVar[bool] = False  # LIKE folds ASCII only; Unicode folds per row in Python
    sorts_rows_for_mixed_order: ClassVar[bool] = False  # no backward index read for a mixed order

    async def planner_estimate(self, count: sa.Select[Any]) -> int | None:
        """What the planner expects `count` to count (query/estimates.py), None where the database
        keeps no statistics the library can read."""
        return None


class SQLiteBackend(Backend):
    name = "sqlite"
    async_driver = "aiosqlite"
    locks_rows = False
    tables_query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    table_exists_query = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = :name"

    async def lock_for_writing(self, write_first: Any) -> None:
        # A deferred transaction that reads first would deadlock with a waiting writer; a write that
        # matches no row takes the write lock so the second writer waits its turn instead.
        await self.database.execute(write_first)

    folds_text_in_python = True


class PostgreSQLBackend(Backend):
    name = "postgresql"
    async_driver = "asyncpg"
    skip_locked_of = True
    unique_by_transaction_lock = True
    tables_query = "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
    table_exists_query = (
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name = :name"
    )

    def lock_due_rows(self, query: sa.Select, table: sa.Table) -> sa.Select:
        return query.with_for_update(skip_locked=True, of=table)  # not the rows its subqueries read

    nulls_sort_low = False
    # asyncpg types a parameter after its column (int4, float4) and fails on a wider value.
    widens_number_parameters = True

    async def planner_estimate(self, count: sa.Select[Any]) -> int | None:
        return explain.postgresql_rows(await self.database.fetch_val(explain.Explain(count)))


class MariaDBBackend(Backend):
    name = "mysql"
    async_driver = "aiomysql"
    unique_by_named_lock = True
    takes_unix_socket = True
    tables_query = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
    table_exists_query = (
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = DATABASE() AND table_name = :name"
    )

    def lock_due_rows(self, query: sa.Select, table: sa.Table) -> sa.Select:
        return query.with_for_update(skip_locked=True)  # MariaDB knows no `OF`

    sorts_rows_for_mixed_order = True

    async def planner_estimate(self, count: sa.Select[Any]) -> int | None:
        return explain.mariadb_rows(await self.database.fetch_all(explain.Explain(count)))


_BACKENDS: dict[str, type[Backend]] = {
    "sqlite": SQLiteBackend,
    "postgresql": PostgreSQLBackend,
    "mysql": MariaDBBackend,
}


def backend_name(scheme: str) -> str | None:
    """The backend's name for a URL scheme (`mariadb` → `mysql`), None for a database we do not serve."""
    return _NAMES.get(scheme)


# The one backend of each host database, for the code handed only the `Database`.
_opened: WeakKeyDictionary[Database, Backend] = WeakKeyDictionary()


def backend_for(database: Database) -> Backend:
    """The backend of the host's database, opened at the first call and the same one after."""
    found = _opened.get(database)
    if found is not None:
        return found
    name = backend_name(database.url.dialect)
    if name is None:
        scheme = database.url.dialect
        raise ValueError(f"pb_headless does not serve a {scheme} database (sqlite, postgresql, mysql)")
    found = _opened[database] = _BACKENDS[name](database)
    return found


def backend_facts(name: str) -> type[Backend]:
    """The facts of the backend of this name, for code that has a dialect's name but no database
    (statements compiled for a named dialect)."""
    return _BACKENDS[backend_name(name) or name]
