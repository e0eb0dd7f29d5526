"""SQLite's write lock, taken at the start of a transaction that reads before it writes.

A deferred SQLite transaction that reads first holds a shared lock; if another connection then holds
the write lock and waits to commit, asking for the write lock is a deadlock that SQLite answers at
once with "database is locked". Writing first (a statement that matches no row still takes the lock)
makes the second writer wait its turn instead. PostgreSQL and MariaDB lock rows, not the database.
"""

from __future__ import annotations

from databases import Database

from pb_headless.database.backends import backend_for
from pb_headless.tables import webhook_tables

_cursor = webhook_tables.cursor
_NOTHING = _cursor.update().where(_cursor.c.id == -1).values(position=_cursor.c.position)


async def lock_for_writing(database: Database) -> None:
    """Call first inside the transaction; does nothing on PostgreSQL and MariaDB."""
    await backend_for(database).lock_for_writing(_NOTHING)
