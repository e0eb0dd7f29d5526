"""Which accelerator (database/accelerator.py) a host's database has."""

from __future__ import annotations

from databases import Database

from pb_headless.database import internals
from pb_headless.database.accelerator import PLAIN, Accelerator
from pb_headless.database.dialect import dialect_name
from pb_headless.database.postgresql.accelerator import POSTGRESQL
from pb_headless.database.sqlite.accelerator import SQLiteAccelerator


def accelerator_of(database: Database) -> Accelerator:
    """The one its SQLite pool carries (sqlite/pool.py); else, by dialect, a fresh one."""
    found = getattr(internals.pool_of(database), "accelerator", None)
    if isinstance(found, Accelerator):
        return found
    if dialect_name(database) == "sqlite":
        return SQLiteAccelerator(None)  # not prepared by the library: its search index, no loop reads
    if dialect_name(database) == "postgresql":
        return POSTGRESQL
    return PLAIN


def reads_inline(database: Database) -> bool:
    """Whether this database reads on the loop's thread (a SQLite file with kept connections)."""
    return accelerator_of(database).reads_inline
