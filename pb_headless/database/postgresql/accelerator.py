"""PostgreSQL's accelerator: the server one (deep pages from noted keys), and the `pg_trgm` indexes
that serve search."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database

from pb_headless.database.postgresql import search_index
from pb_headless.database.server_accelerator import ServerAccelerator


class PostgreSQLAccelerator(ServerAccelerator):
    """One per `Database` (database/accelerators.py), holding its noted keys."""

    async def ensure_search_index(
        self, database: Database, definition: sa.Table, searchable: tuple[str, ...]
    ) -> str | None:
        # The planner finds the trigram indexes by itself: the query stays the same, so there is no
        # candidates table for the compiler to join (None), whether they were made or not.
        await search_index.ensure_search_index(database, definition, searchable)
        return None

    async def drop_search_index(self, database: Database, table: str) -> None:
        await search_index.drop_search_index(database, table)
