"""Which tables a database has: what tells a new database, a 0.1.0 one and a migrated one apart."""

from __future__ import annotations

from databases import Database

from pb_headless.database.dialect import dialect_name


async def existing_tables(database: Database) -> set[str]:
    """The names of the tables in the database's current schema."""
    dialect = dialect_name(database)
    if dialect == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    elif dialect == "postgresql":
        query = "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
    else:
        query = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
    return {row[0] for row in await database.fetch_all(query)}
