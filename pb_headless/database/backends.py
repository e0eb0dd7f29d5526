"""One backend object per database: what differs between SQLite, PostgreSQL and MariaDB, by name.

Code outside `database/` asks the backend for a capability ("lock the due rows", "guard this unique
field", "which tables exist") and never compares dialect names; a fourth database is one more
subclass here and one more entry in `_BACKENDS` (docs/architecture.md, "The database backend").
`backend_for` opens one per host `Database` and hands the same one to every caller (`HeadlessAPI`
opens it at start; code that is handed only the `Database`, the webhook worker and the migration
commands, finds it the same way), so the per-database state it holds is kept once.

The backend also holds what is kept per database (the caches, the implied indexes made, SQLite's
queue of writers, the server accelerator) so that nothing finds it again through a module-level map.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from typing import TYPE_CHECKING, Any, ClassVar
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from databases import Database
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool
from sqlalchemy.schema import CreateIndex

from pb_headless.database.caches import Caches
from pb_headless.database.dialect import backend_name, dialect_of

if TYPE_CHECKING:
    from pb_headless.database.accelerator import Accelerator

# The async drivers SQLAlchemy takes for the same database, for reflection and migrations.
ASYNC_DRIVERS = ("asyncpg", "aiomysql", "asyncmy", "aiosqlite")
# The migration lock: pg_advisory_lock takes a bigint, "pbmigrat" in ASCII; MariaDB's GET_LOCK waits
# this long; SQLite's busy timeout for the migration's connection.
POSTGRESQL_MIGRATION_LOCK = 0x70626D6967726174
MARIADB_MIGRATION_LOCK_SECONDS = 600
SQLITE_MIGRATION_BUSY_SECONDS = 600
MARIADB_DESCENDING = (10, 8)  # the first MariaDB that reads a descending index as one


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
        """Wait up to `seconds` for the session's lock called `name`; whether it was granted."""
        raise NotImplementedError

    async def release_named_lock(self, name: str) -> None:
        raise NotImplementedError

    async def take_transaction_lock(self, key: int) -> None:
        """Wait for the lock numbered `key`, held to the end of the transaction."""
        raise NotImplementedError


class SQLiteBackend(Backend):
    name = "sqlite"
    async_driver = "aiosqlite"
    locks_rows = False
    # RETURNING arrived in SQLite 3.35: before it, each row's key is the driver's lastrowid.
    returns_inserted_keys = sqlite3.sqlite_version_info >= (3, 35)
    drops_indexes_with_column = False
    is_file = True
    migration_steps_in_savepoints = True
    tables_query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    table_exists_query = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = :name"

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        # This process's writers queue here, first come first served, before asking for the write
        # lock: SQLite's own busy handler retries with growing sleeps, and under many writers one of
        # them can starve past the database time limit while the others keep winning the lock.
        self.writers = asyncio.Lock()

    async def lock_for_writing(self, write_first: Any) -> None:
        # A deferred transaction that reads first would deadlock with a waiting writer; a write that
        # matches no row takes the write lock so the second writer waits its turn instead.
        await self.database.execute(write_first)

    async def drop_indexes_over(self, table: str, column: str, prefix: str) -> list[str]:
        query = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :table"
        dropped = []
        for row in await self.database.fetch_all(query, {"table": table}):
            name = str(row[0])
            if not name.startswith(prefix):
                continue
            columns = {info[2] for info in await self.database.fetch_all(f'PRAGMA index_info("{name}")')}
            if column in columns:
                await self.database.execute(f'DROP INDEX IF EXISTS "{name}"')
                dropped.append(name)
        return dropped

    def prepare_migration_connection(self, connection: Connection) -> None:
        """SQLite's Python driver starts no transaction before DDL, so a failed step would stay half
        applied. SQLAlchemy's recipe, for this connection only: the driver leaves transactions
        alone, and every transaction is a BEGIN IMMEDIATE, which takes the database's write lock at
        once: that is the migration lock, waited for up to SQLITE_MIGRATION_BUSY_SECONDS."""
        driver_connection = connection.connection.dbapi_connection
        assert driver_connection is not None  # a connection of engine(), open
        driver_connection.isolation_level = None
        cursor = driver_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_MIGRATION_BUSY_SECONDS * 1000}")
        cursor.close()

        @sa.event.listens_for(connection, "begin")
        def begin_immediate(connection: Connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    def take_migration_lock(self, connection: Connection) -> None:
        return None


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

    returns_inserted_key = True
    returns_inserted_keys = True
    error_spoils_transaction = True
    index_holds_key = False  # a deep page's keys come from the index alone when it names them

    def lock_due_rows(self, query: sa.Select, table: sa.Table) -> sa.Select:
        return query.with_for_update(skip_locked=True, of=table)  # not the rows its subqueries read

    def take_migration_lock(self, connection: Connection) -> tuple[sa.TextClause, dict[str, Any]]:
        connection.exec_driver_sql(f"SELECT pg_advisory_lock({POSTGRESQL_MIGRATION_LOCK})")
        return sa.text(f"SELECT pg_advisory_unlock({POSTGRESQL_MIGRATION_LOCK})"), {}

    async def take_transaction_lock(self, key: int) -> None:
        await self.database.execute(sa.select(sa.func.pg_advisory_xact_lock(key)))


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

    # MariaDB cannot read an ascending index backwards to break ties by key ascending, and cannot
    # index TEXT or keys over 3072 bytes without a prefix (constructor/indexes.py).
    makes_descending_indexes = True
    index_key_bytes = 3072
    names_key_order_index = True

    def lock_due_rows(self, query: sa.Select, table: sa.Table) -> sa.Select:
        return query.with_for_update(skip_locked=True)  # MariaDB knows no `OF`

    async def create_index(self, index: sa.Index) -> None:
        # MariaDB's CREATE INDEX has IF NOT EXISTS, MySQL's has not: ask first.
        table = index.table
        if table is not None:  # an index always belongs to its table here; the attribute is optional
            rows = await self.database.fetch_all(f"SHOW INDEX FROM `{table.name}`")
            if any(row._mapping["Key_name"] == index.name for row in rows):
                return
        await self.database.execute(str(CreateIndex(index).compile(dialect=self.dialect())))

    async def reads_descending_indexes(self) -> bool:
        """MariaDB reads descending indexes from 10.8 on (an older one makes a plain copy of the
        ascending index), MySQL from 8.0."""
        version = str(await self.database.fetch_val("SELECT VERSION()"))
        numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
        return numbers >= (MARIADB_DESCENDING if "mariadb" in version.lower() else (8, 0))

    def take_migration_lock(self, connection: Connection) -> tuple[sa.TextClause, dict[str, Any]]:
        # GET_LOCK names are server-wide (64 characters at most), so the name carries the database's.
        lock_name = "SELECT LEFT(CONCAT('pb_headless_migrate:', DATABASE()), 64)"
        name = connection.exec_driver_sql(lock_name).scalar()
        got = connection.execute(sa.text("SELECT GET_LOCK(:name, :wait)"),
                                 {"name": name, "wait": MARIADB_MIGRATION_LOCK_SECONDS}).scalar()  # fmt: skip
        if got != 1:
            raise RuntimeError(
                f"another instance has held the migration lock for {MARIADB_MIGRATION_LOCK_SECONDS} s; "
                "not migrating"
            )
        return sa.text("SELECT RELEASE_LOCK(:name)"), {"name": name}

    async def take_named_lock(self, name: str, seconds: int) -> bool:
        return await self.database.fetch_val(sa.select(sa.func.get_lock(name, seconds))) == 1

    async def release_named_lock(self, name: str) -> None:
        await self.database.fetch_val(sa.select(sa.func.release_lock(name)))


_BACKENDS: dict[str, type[Backend]] = {
    "sqlite": SQLiteBackend,
    "postgresql": PostgreSQLBackend,
    "mysql": MariaDBBackend,
}


def backend_class(scheme: str) -> type[Backend] | None:
    """The backend class for a URL scheme or dialect name (its facts, without a database)."""
    name = backend_name(scheme)
    return None if name is None else _BACKENDS[name]


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
