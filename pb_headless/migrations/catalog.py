"""Which tables a database has: what tells a new database, a 0.1.0 one and a migrated one apart."""

from __future__ import annotations

from databases import Database

from pb_headless.database.backends import backend_for


async def existing_tables(database: Database) -> set[str]:
    """The names of the tables in the database's current schema."""
    return await backend_for(database).existing_tables()
