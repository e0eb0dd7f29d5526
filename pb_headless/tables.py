"""The library's own tables and the installer that creates them."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateIndex, CreateTable

from pb_headless.database.database_errors import is_duplicate_key
from pb_headless.database.dialect import dialect_name, run_ddl

metadata = sa.MetaData()

tokens = sa.Table(
    "pb_api_tokens",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("prefix", sa.String(8), nullable=False),
    sa.Column("scopes", sa.Text, nullable=False),
    sa.Column("expires_at", sa.DateTime, nullable=True),
    sa.Column("user_id", sa.String(64), nullable=True),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("last_used_at", sa.DateTime, nullable=True),
)

settings = sa.Table(
    "pb_system_settings",
    metadata,
    sa.Column("key", sa.String(100), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

# One row whose version moves on every change another instance must see (tokens, settings,
# published tables), so each instance rebuilds its compiled state only when it moved.
state = sa.Table(
    "pb_state",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("version", sa.BigInteger, nullable=False),
)

# The API tab of each constructor table (docs/constructor.md). The table
# definitions are the host's; what is published of them lives here so every instance sees it.
# Name lists are JSON arrays; NULL in writable/filterable/sortable means "the ticked fields".
constructor_api = sa.Table(
    "pb_constructor_api",
    metadata,
    sa.Column("table_name", sa.String(64), primary_key=True),
    sa.Column("enabled", sa.Boolean, nullable=False, default=False),
    sa.Column("fields", sa.Text, nullable=False),
    sa.Column("operations", sa.Text, nullable=False),
    sa.Column("url_name", sa.String(100), nullable=True),
    sa.Column("writable", sa.Text, nullable=True),
    sa.Column("filterable", sa.Text, nullable=True),
    sa.Column("sortable", sa.Text, nullable=True),
    sa.Column("updated_at", sa.DateTime, nullable=False),
)

# The change log (docs/changes.md): one row per committed create, update or delete of a row of a
# published table, written in the writing transaction (by triggers the library installs), so an entry
# exists if and only if its change committed. `position` only grows; `row_key` is the primary key as text.
changes = sa.Table(
    "pb_changes",
    metadata,
    sa.Column(
        "position",
        sa.BigInteger().with_variant(sa.Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    ),
    sa.Column("table_name", sa.String(64), nullable=False),
    sa.Column("row_key", sa.String(255), nullable=False),
    sa.Column("op", sa.String(6), nullable=False),  # create | update | delete
    sa.Column("changed_at", sa.DateTime, nullable=False),
    sa.Index("pb_changes_table_position", "table_name", "position"),
)

# docs/cors-and-rate-limits.md: system settings created by the installer, with their defaults.
DEFAULT_SETTINGS: dict[str, str] = {
    "service_cors_origins": "",
    "service_cors_paths": "api/*",
    "service_cors_methods": "GET,POST,PUT,PATCH,DELETE,OPTIONS",
    "service_cors_headers": "Authorization,Content-Type,X-Requested-With,X-API-Key",
    "service_cors_credentials": "no",
    "service_cors_max_age": "86400",
}


async def install(database: Database) -> None:
    """Create the library's tables and default settings; running it again changes nothing."""
    existing = await existing_tables(database)
    for table in metadata.sorted_tables:
        if table.name not in existing:  # MariaDB warns on IF NOT EXISTS for a present table
            await run_ddl(database, CreateTable(table, if_not_exists=True))
        for index in table.indexes:
            await _create_index(database, index)
    # Row 1: the version of tokens, settings and publications; row 2: the data version (records
    # written through the library). Inserting a missing row is also how an older database gets row 2.
    await _insert_missing(database, state, "id", {1: {"id": 1, "version": 1}, 2: {"id": 2, "version": 1}})
    await _insert_missing(
        database,
        settings,
        "key",
        {key: {"key": key, "value": value} for key, value in DEFAULT_SETTINGS.items()},
    )


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


async def _create_index(database: Database, index: sa.Index) -> None:
    if dialect_name(database) == "mysql":  # MariaDB has no CREATE INDEX IF NOT EXISTS before 10.1.4
        table = index.table
        if table is None:
            return
        existing = await database.fetch_all(f"SHOW INDEX FROM {table.name}")
        if any(row._mapping["Key_name"] == index.name for row in existing):
            return
    await run_ddl(database, CreateIndex(index, if_not_exists=True))


async def _insert_missing(database: Database, table: sa.Table, key: str, rows: dict[object, dict]) -> None:
    present = {row[0] for row in await database.fetch_all(sa.select(table.c[key]))}
    for value, row in rows.items():
        if value in present:
            continue
        try:
            await database.execute(table.insert().values(**row))
        except Exception as error:  # another installer won the race; the row is there
            if not is_duplicate_key(error):
                raise
