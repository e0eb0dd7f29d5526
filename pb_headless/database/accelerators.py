"""Which accelerator (database/accelerator_interface.py) a host's database has."""

from __future__ import annotations

from databases import Database

from pb_headless.database import internals
from pb_headless.database.accelerator_interface import PLAIN, Accelerator
from pb_headless.database.backends import backend_for, backend_name
from pb_headless.database.postgresql.accelerator import PostgreSQLAccelerator
from pb_headless.database.server_accelerator import ServerAccelerator
from pb_headless.database.sqlite.accelerator import SQLiteAccelerator


def accelerator_of(database: Database) -> Accelerator:
    """The one its SQLite pool carries (sqlite/pool.py); PostgreSQL's and MariaDB's, kept on the
    database's backend; else a fresh one."""
    found = getattr(internals.pool_of(database), "accelerator", None)
    if isinstance(found, Accelerator):
        return found
    dialect = backend_name(database.url.dialect)
    if dialect == "sqlite":
        return SQLiteAccelerator(None)  # not prepared by the library: its search index, no loop reads
    if dialect is None:
        return PLAIN
    backend = backend_for(database)
    if backend.accelerator is None:
        backend.accelerator = PostgreSQLAccelerator() if dialect == "postgresql" else ServerAccelerator()
    return backend.accelerator


def reads_inline(database: Database) -> bool:
    """Whether this database reads on the loop's thread (a SQLite file with kept connections)."""
    return accelerator_of(database).reads_inline
