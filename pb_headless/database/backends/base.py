"""What every backend offers: the facts it answers by name, the operations with their plain SQL
version, and the state kept per database (docs/architecture.md, "The database backend")."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, ClassVar

import sqlalchemy as sa
from databases import Database
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool
from sqlalchemy.schema import CreateIndex

from pb_headless.database import change_triggers
from pb_headless.database.caches import Caches
from pb_headless.database.dialect import dialect_of

if TYPE_CHECKING:
    from pb_headless.database.accelerator_interface import Accelerator

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
    unique_by_transaction_lock: ClassVar[bool] = False
    takes_unix_socket: ClassVar[bool] = False  # the URL's `unix_socket` goes to the driver as is
    tables_query: ClassVar[str]  # the names of the tables in the current schema
    table_exists_query: ClassVar[str]  # count(*) of tables called :name in the current schema
    # Writes (api/writes.py, api/batch_inserts.py).
    returns_inserted_key: ClassVar[bool] = False  # INSERT … RETURNING for one row; else the lastrowid
    returns_inserted_keys: ClassVar[bool] = False  # a multi-row INSERT … RETURNING gives every key
    # A failed statement spoils the whole transaction until it is rolled back to a savepoint
    # (PostgreSQL), so a statement that may fail and be retried runs inside one.
    error_spoils_transaction: ClassVar[bool] = False
    # Implied indexes (constructor/indexes.py).
    index_holds_key: ClassVar[bool] = True  # an index holds the row's key after its columns
    makes_descending_indexes: ClassVar[bool] = False  # `(…, s DESC)`, for a planner that cannot read back
    index_key_bytes: ClassVar[int | None] = None  # the longest index key; TEXT not indexable when set
    names_key_order_index: ClassVar[bool] = False  # deep pages name the `(published)` index
    drops_indexes_with_column: ClassVar[bool] = True  # DROP COLUMN drops or shrinks its indexes
    is_file: ClassVar[bool] = False  # the database lives in one file (a path, not a server)
    # The migration lock is one write transaction, each step a savepoint of it (SQLite); elsewhere
    # a session lock, each step a transaction of its own.
    migration_steps_in_savepoints: ClassVar[bool] = False

    def __init__(self, database: Database) -> None:
        self.database = database
        self.caches = Caches()  # what the API object keeps between requests (database/caches.py)
        self.made_indexes: set[str] = set()  # implied indexes this instance made or found (constructor)
        self.accelerator: Accelerator | None = None  # kept by database/accelerators.py once made
        self.told_missing_extension = False  # PostgreSQL's search index: a missing pg_trgm is logged once
        self._engine: AsyncEngine | None = None  # SQLAlchemy's, for reflection and migrations (engine())

    @functools.cached_property
    def change_log_triggers(self) -> change_triggers.ChangeTriggers:
        """The change log's triggers as this database writes them (database/change_triggers.py)."""
        raise NotImplementedError

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

    def engine_url(self) -> URL:
        """The host's URL with the async driver SQLAlchemy needs for the same database, without the
        URL's options: those are `databases`' own (min_size, max_size, pool_recycle, ssl,
        unix_socket), which SQLAlchemy would hand the driver as unknown keywords; the ones that
        concern the connection go in `connect_options`."""
        url = make_url(str(self.database.url))
        driver = url.drivername.partition("+")[2]
        return url.set(drivername=self.driver_url(driver), query={})

    def connect_options(self) -> dict[str, Any]:
        """`ssl` and `unix_socket`, from the URL or the `Database(...)` keywords, read as `databases`
        does, for the driver SQLAlchemy connects with."""
        options = {**self.database.url.options, **getattr(self.database, "options", {})}
        chosen: dict[str, Any] = {}
        ssl = options.get("ssl")
        if isinstance(ssl, str):
            chosen["ssl"] = {"true": True, "false": False}.get(ssl.lower(), ssl)
        elif ssl is not None:
            chosen["ssl"] = ssl
        if options.get("unix_socket") and self.takes_unix_socket:
            chosen["unix_socket"] = options["unix_socket"]
        return chosen

    def engine(self) -> AsyncEngine:
        """The one SQLAlchemy engine on this database, for the registry's reflection and for
        migrations: no pool (each use opens a connection and closes it), made at the first use."""
        if self._engine is None:
            self._engine = create_async_engine(
                self.engine_url(), poolclass=NullPool, connect_args=self.connect_options()
            )
        return self._engine

    async def dispose_engine(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()

    async def create_index(self, index: sa.Index) -> None:
        """Make `index` unless the table has one of that name."""
        made = CreateIndex(index, if_not_exists=True)
        await self.database.execute(str(made.compile(dialect=self.dialect())))

    async def reads_descending_indexes(self) -> bool:
        """Whether the server reads an index's descending column as such (asked when it makes them)."""
        return True

    async def drop_indexes_over(self, table: str, column: str, prefix: str) -> list[str]:
        """Where DROP COLUMN refuses a column an index uses: drop the indexes named `prefix…` over
        it first; the names of those dropped."""
        return []

    def dialect(self) -> sa.Dialect:
        """The SQLAlchemy dialect this database's statements are compiled with."""
        return dialect_of(self.database)

    # Migrations: one connection of their own holds the database's migration lock.
    def prepare_migration_connection(self, connection: Connection) -> None:
        """Set up the migration's connection (of `engine()`) before its first statement."""

    def take_migration_lock(self, connection: Connection) -> tuple[sa.TextClause, dict[str, Any]] | None:
        """Wait for the migration lock; the statement and values that release it, or None when the
        lock is the write transaction the migration runs in (every step in a savepoint of it)."""
        raise NotImplementedError

    # Guarding `unique` (api/uniqueness.py), where `unique_by_named_lock` or
    # `unique_by_transaction_lock` says the database takes turns that way.
    async def take_named_lock(self, name: str, seconds: int) -> bool:
        """Wait up to `seconds` for the session's lock called `name`, one of this database's own (never
        another database's on the same server); whether it was granted."""
        raise NotImplementedError

    async def release_named_lock(self, name: str) -> None:
        raise NotImplementedError

    async def take_transaction_lock(self, key: int) -> None:
        """Wait for the lock numbered `key`, held to the end of the transaction."""
        raise NotImplementedError
