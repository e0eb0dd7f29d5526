"""Statements a host's own expressions narrow (a declaration's `query`), run on every database.

`databases`' SQLite backend formats each statement's SQL with `%` for its debug log line, so a
literal `%` in the SQL (`title.startswith("HIDDEN")` compiles to `LIKE ? || '%'`) raised
`ValueError` on every request (issue 26.6). The library's own SQL never holds one (its patterns are
bound values); a host's `query` may. On a qmark driver (SQLite) such statements are therefore
compiled here, as that backend would, and run on the request's connection like the prepared ones
(database/statements.py); other drivers take them through `databases` unchanged.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.database import internals, statements
from pb_headless.database.dialect import dialect_of


async def fetch_rows(database: Database, statement: sa.Select[Any]) -> list[Any]:
    """Every row of the statement, each readable by column name."""
    dialect = dialect_of(database)
    if dialect.paramstyle != "qmark":
        return list(await database.fetch_all(statement))
    compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    values = compiled.construct_params()
    processors = internals.bind_processors(compiled)
    arguments = tuple(
        processors[name](values[name]) if name in processors else values[name]
        for name in compiled.positiontup or ()
    )
    columns = internals.result_columns(compiled)
    keys = tuple(str(column.keyname) for column in columns)
    readers = tuple(internals.result_processor(column.type, dialect) for column in columns)
    return [
        statements.FetchedRow(
            (key, value if read is None or value is None else read(value))
            for key, read, value in zip(keys, readers, row, strict=True)
        )
        for row in await statements.run(database, "qmark", compiled.string, arguments)
    ]


async def fetch_row(database: Database, statement: sa.Select[Any]) -> Any:
    """The first row of the statement, or None."""
    rows = await fetch_rows(database, statement)
    return rows[0] if rows else None


async def fetch_value(database: Database, statement: sa.Select[Any]) -> Any:
    """The first column of the first row, or None."""
    row = await fetch_row(database, statement)
    return None if row is None else next(iter(row._mapping.values()), None)
