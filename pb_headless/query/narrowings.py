"""A declaration's `query` tried once at start on the database that will serve it.

An expression the database cannot run (`regexp_match` on SQLite, which has no REGEXP function) would
otherwise answer every request to the object with a 500; tried at start, it stops the start with a
message naming the object instead. The try reads no row (`LIMIT 0`) and the database still compiles
every function and operator in it.
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa
from databases import Database

from pb_headless.database import oneoff
from pb_headless.database.database_errors import is_unavailable
from pb_headless.database.dialect import dialect_of
from pb_headless.registry import ObjectSpec
from pb_headless.registry.declaration import DeclarationError


async def check_narrowings(database: Database, catalog: Mapping[str, ObjectSpec]) -> None:
    """Raise `DeclarationError` for the first object whose `query` this database refuses."""
    for spec in catalog.values():
        if spec.query is None:
            continue
        base = sa.select(*spec.table.primary_key.columns).select_from(spec.table)
        try:
            await oneoff.fetch_rows(database, spec.query(base).limit(0))
        except Exception as error:
            if is_unavailable(error):  # the database is away: that is no fault of the declaration
                raise
            problem = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            raise DeclarationError(
                spec.source,
                spec.name,
                "query",
                f"the expression cannot run on {dialect_of(database).name} ({problem}); "
                "use one this database supports (on SQLite: no regexp_match)",
            ) from None
