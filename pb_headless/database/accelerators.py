"""Which accelerator (database/accelerator.py) a host's database has."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from databases import Database

from pb_headless.database import internals
from pb_headless.database.accelerator import PLAIN, Accelerator
from pb_headless.database.dialect import dialect_name
from pb_headless.database.postgresql.accelerator import PostgreSQLAccelerator
from pb_headless.database.server_accelerator import ServerAccelerator
from pb_headless.database.sqlite.accelerator import SQLiteAccelerator

_SERVERS: WeakKeyDictionary[Database, ServerAccelerator] = WeakKeyDictionary()


def accelerator_of(database: Database) -> Accelerator:
    """The one its SQLite pool carries (sqlite/pool.py); PostgreSQL's and MariaDB's, one per
    `Database` for as long as it lives; else a fresh one."""
    found = getattr(internals.pool_of(database), "accelerator", None)
    if isinstance(found, Accelerator):
        return found
    dialect = dialect_name(database)
    if dialect == "sqlite":
        return SQLiteAccelerator(None)  # not prepared by the library: its search index, no loop reads
    if dialect in ("postgresql", "mysql"):
        server = _SERVERS.get(database)
        if server is None:
            made = PostgreSQLAccelerator() if dialect == "postgresql" else ServerAccelerator()
            server = _SERVERS[database] = made
        return server
    return PLAIN


def reads_inline(database: Database) -> bool:
    """Whether this database reads on the loop's thread (a SQLite file with kept connections)."""
    return accelerator_of(database).reads_inline
