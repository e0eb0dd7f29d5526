"""The one short-lived connection a migration runs on: made from the host's `databases` URL, holding
the database's migration lock for as long as it is open.

Alembic speaks SQLAlchemy, the host speaks `databases`; so a migration opens a SQLAlchemy async engine
on the same URL with the matching async driver, without a pool, and disposes of it when done.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from databases import Database
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from pb_headless.database.backends import backend_for, backend_name
from pb_headless.migrations.errors import MigrationError

# The options of `databases`' own pool, which SQLAlchemy's drivers do not take.
POOL_OPTIONS = ("min_size", "max_size", "pool_recycle")
# pg_advisory_lock takes a bigint: "pbmigrat" in ASCII. GET_LOCK names are server-wide (64 characters
# at most), so MariaDB's carries the database's name.
POSTGRESQL_LOCK = 0x70626D6967726174
MARIADB_LOCK_SECONDS = 600
SQLITE_BUSY_SECONDS = 600

T = TypeVar("T")


def engine_url(database: Database) -> URL:
    """The host's URL with the async driver SQLAlchemy needs for the same database."""
    url = make_url(str(database.url))
    scheme, _, driver = url.drivername.partition("+")
    name = backend_name(scheme)
    if name is None:
        raise ValueError(f"pb_headless cannot migrate a {scheme} database (sqlite, postgresql, mysql)")
    if name == "sqlite" and url.database in (None, "", ":memory:"):
        raise ValueError("an in-memory SQLite database cannot be migrated: use a database file")
    return url.set(drivername=backend_for(database).driver_url(driver)).difference_update_query(POOL_OPTIONS)


async def run_locked(database: Database, work: Callable[[Connection], T]) -> T:
    """`work(connection)` on a connection of its own that holds the migration lock; two instances
    doing this at once take turns, so the second finds the first one's result."""
    async with _connection(database) as connection:
        return await connection.run_sync(_with_lock, work)


@contextlib.asynccontextmanager
async def _connection(database: Database) -> AsyncIterator[Any]:
    url = engine_url(database)
    options: dict[str, Any] = {"poolclass": NullPool}
    if url.get_backend_name() == "sqlite":
        options["connect_args"] = {"timeout": SQLITE_BUSY_SECONDS}
    engine = create_async_engine(url, **options)
    if url.get_backend_name() == "sqlite":
        _sqlite_transactions(engine.sync_engine)
    try:
        async with engine.connect() as connection:
            yield connection
    finally:
        await engine.dispose()


def _sqlite_transactions(engine: sa.Engine) -> None:
    """SQLite's Python driver starts no transaction before DDL, so a failed step would stay half
    applied. SQLAlchemy's recipe: the driver leaves transactions alone, and every transaction is a
    BEGIN IMMEDIATE, which takes the database's write lock at once: that is the migration lock."""

    @sa.event.listens_for(engine, "connect")
    def no_driver_transactions(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None

    @sa.event.listens_for(engine, "begin")
    def begin_immediate(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _with_lock(connection: Connection, work: Callable[[Connection], T]) -> T:
    if connection.dialect.name == "sqlite":
        return _in_write_transaction(connection, work)
    unlock, names = _take_server_lock(connection)
    # The lock belongs to the session and outlives this commit; each step has a transaction of its own.
    connection.commit()
    try:
        return work(connection)
    finally:
        connection.rollback()
        connection.execute(unlock, names)
        connection.commit()


def _in_write_transaction(connection: Connection, work: Callable[[Connection], T]) -> T:
    """SQLite: one outer transaction holds the write lock; each step runs in a savepoint of it, so the
    steps before a failing one are kept."""
    transaction = connection.begin()
    try:
        result = work(connection)
    except MigrationError:
        transaction.commit()
        raise
    except BaseException:
        transaction.rollback()
        raise
    transaction.commit()
    return result


def _take_server_lock(connection: Connection) -> tuple[sa.TextClause, dict[str, Any]]:
    """Waits for the migration lock of PostgreSQL or MariaDB; returns the statement that releases it."""
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_lock({POSTGRESQL_LOCK})")
        return sa.text(f"SELECT pg_advisory_unlock({POSTGRESQL_LOCK})"), {}
    lock_name = "SELECT LEFT(CONCAT('pb_headless_migrate:', DATABASE()), 64)"
    name = connection.exec_driver_sql(lock_name).scalar()
    got = connection.execute(sa.text("SELECT GET_LOCK(:name, :wait)"),
                             {"name": name, "wait": MARIADB_LOCK_SECONDS}).scalar()  # fmt: skip
    if got != 1:
        raise RuntimeError(
            f"another instance has held the migration lock for {MARIADB_LOCK_SECONDS} s; not migrating"
        )
    return sa.text("SELECT RELEASE_LOCK(:name)"), {"name": name}
