"""The shared version counter every instance reads to know when its compiled state is stale."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database

from pb_headless.tables import state

_READ_VERSION = sa.select(state.c.version).where(state.c.id == 1)
_BUMP_VERSION = state.update().where(state.c.id == 1).values(version=state.c.version + 1)


async def read_version(database: Database) -> int:
    version = await database.fetch_val(_READ_VERSION)
    return int(version or 0)


async def bump_version(database: Database) -> None:
    """Tell every instance that tokens, settings or published tables changed."""
    await database.execute(_BUMP_VERSION)
