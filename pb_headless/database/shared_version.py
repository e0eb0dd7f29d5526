"""The shared version counters every instance reads: row 1 of `pb_state` moves when the compiled
state (tokens, settings, published tables) is stale, row 2 on every write made through the library.

They sit in the database layer, below `state/` (whose snapshot is built per version) and below the
write transactions that move the data version; `pb_state` is named here as a plain table, so that
this layer imports nothing of the library's table definitions (pb_headless/tables.py).
"""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database

from pb_headless.database.caches import Caches
from pb_headless.database.dialect import dialect_of
from pb_headless.database.statements import fetch_fixed

state = sa.table("pb_state", sa.column("id", sa.Integer), sa.column("version", sa.BigInteger))
_READ_VERSION = sa.select(state.c.version).where(state.c.id == 1)
_BUMP_VERSION = state.update().where(state.c.id == 1).values(version=state.c.version + 1)


async def read_version(database: Database, caches: Caches | None = None) -> int:
    # Compiled once per API object (what /health runs on every call); a short read on SQLite.
    rows = await fetch_fixed(database, caches or Caches(), _READ_VERSION, {})
    return int(rows[0]["version"] or 0) if rows else 0


async def bump_version(database: Database) -> None:
    """Tell every instance that tokens, settings or published tables changed."""
    await database.execute(_BUMP_VERSION)


# Row 2 moves on every write made through the library (records created, updated, deleted), so each
# instance knows when a count it kept is out of date (pb_headless/database/totals.py).
DATA_VERSION_ID = 2
_READ_DATA_VERSION = sa.select(state.c.version).where(state.c.id == DATA_VERSION_ID)
_BUMP_DATA_VERSION = state.update().where(state.c.id == DATA_VERSION_ID).values(version=state.c.version + 1)


def data_version_column() -> sa.ScalarSelect[int]:
    """The data version as a column, to read it in the same query as something else."""
    return _READ_DATA_VERSION.scalar_subquery()


async def read_data_version(database: Database) -> int | None:
    version = await database.fetch_val(_READ_DATA_VERSION)
    return None if version is None else int(version)


_bump_data_version_sql: dict[str, str] = {}  # by dialect name: at most one entry per database kind


async def bump_data_version(database: Database) -> None:
    """Tell every instance that published rows changed (inside the write's own transaction).

    Every create, update and delete runs this: the UPDATE is compiled to its SQL text once per kind of
    database (its values are constants), not once per write: compiling it was about a fifth of a single
    create's time in the library under cProfile on SQLite (docs/performance.md, "Against PocketBase's
    batch, over HTTP")."""
    await database.execute(bump_data_version_sql(database))


def bump_data_version_sql(database: Database) -> str:
    """The SQL text of `bump_data_version`, for a caller that runs it on its own connection."""
    dialect = dialect_of(database)
    sql = _bump_data_version_sql.get(dialect.name)
    if sql is None:
        compiled = _BUMP_DATA_VERSION.compile(dialect=dialect, compile_kwargs={"literal_binds": True})
        sql = _bump_data_version_sql[dialect.name] = str(compiled)
    return sql
