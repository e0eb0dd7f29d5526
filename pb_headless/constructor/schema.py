"""The SQL table behind a constructor table: its SQLAlchemy definition, and creating it in the database."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable

from pb_headless.constructor.kinds import KINDS
from pb_headless.constructor.model import PRIMARY_KEY, PUBLISHED, ConstructorField, ConstructorTable
from pb_headless.database.backends import backend_for
from pb_headless.database.dialect import run_ddl
from pb_headless.state import bump_version


def table_for(table: ConstructorTable) -> sa.Table:
    """`id` (integer primary key), the fields in their order, and `published` (boolean, default true)."""
    return sa.Table(
        table.name,
        sa.MetaData(),
        sa.Column(PRIMARY_KEY, sa.Integer, primary_key=True, autoincrement=True),
        *(column_for(field) for field in table.fields),
        # Rows the host adds without saying otherwise are published, as rows created through the API are.
        # A server default only: a Python-side one is not applied by `databases`, which would send NULL.
        sa.Column(PUBLISHED, sa.Boolean, nullable=False, server_default=sa.true()),
    )


def column_for(field: ConstructorField) -> sa.Column[object]:
    kind = KINDS[field.type]
    # The label travels on the column: validation messages and the OpenAPI schema name the field by it.
    info = {"label": field.label} if field.label else {}
    return sa.Column(field.name, kind.column_type(field.max_length), nullable=not field.required, info=info)


async def create_table(database: Database, table: ConstructorTable) -> sa.Table:
    """Create the SQL table (if it does not exist yet) and tell every instance the tables changed."""
    definition = table_for(table)
    # Asked first because MariaDB answers IF NOT EXISTS on an existing table with a warning.
    if not await table_exists(database, table.name):
        await run_ddl(database, CreateTable(definition, if_not_exists=True))
    await bump_version(database)
    return definition


async def table_exists(database: Database, name: str) -> bool:
    """Whether the database has a table of this name (asked of its catalog, so no statement fails)."""
    return await backend_for(database).table_exists(name)
