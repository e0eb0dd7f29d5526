"""The site's own tables: administration users, site settings, and the constructor's table definitions."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.schema import CreateTable

metadata = sa.MetaData()

users = sa.Table(
    "site_users",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("username", sa.String(100), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(255), nullable=False),
    sa.Column("blocked", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

site_settings = sa.Table(
    "site_settings",
    metadata,
    sa.Column("key", sa.String(100), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

# The constructor's definitions: what a site owner made in the table window. The SQL table itself
# is created from them by pb_headless.constructor.create_table.
content_tables = sa.Table(
    "site_content_tables",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(64), nullable=False, unique=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

content_fields = sa.Table(
    "site_content_fields",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("table_id", sa.Integer, sa.ForeignKey("site_content_tables.id"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("label", sa.String(200), nullable=True),
    sa.Column("type", sa.String(20), nullable=False),
    sa.Column("required", sa.Boolean, nullable=False, default=False),
    sa.Column("searchable", sa.Boolean, nullable=False, default=False),
    sa.Column("length", sa.Integer, nullable=True),
)

# Administration sessions, server-side: the signed cookie only carries a random key whose hash is
# here, so logging out (deleting the row) ends the session for good, on every instance.
admin_sessions = sa.Table(
    "site_sessions",
    metadata,
    sa.Column("key_hash", sa.String(64), primary_key=True),
    sa.Column("user_id", sa.Integer, sa.ForeignKey("site_users.id"), nullable=False, index=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

# Failed sign-ins per user name and per client address, shared by every instance (examples/site/logins.py).
login_failures = sa.Table(
    "site_login_failures",
    metadata,
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("last_failure_at", sa.DateTime, nullable=False),
)

_DIALECTS = {"sqlite": sqlite, "postgresql": postgresql, "mysql": mysql, "mariadb": mysql}


def dialect_of(database: Database) -> Dialect:
    module = _DIALECTS.get(database.url.dialect)
    if module is None:
        raise ValueError(f"unsupported database '{database.url.dialect}': use sqlite, postgresql or mysql")
    return module.dialect()  # type: ignore[no-any-return]


async def create_tables(database: Database, tables: sa.MetaData) -> None:
    """Create each missing table, parents first; running it again changes nothing.

    Existing tables are skipped before `IF NOT EXISTS`, because MariaDB answers that clause on an
    existing table with a driver warning on every run.
    """
    dialect = dialect_of(database)
    for table in tables.sorted_tables:
        if not await table_exists(database, table.name):
            await database.execute(str(CreateTable(table, if_not_exists=True).compile(dialect=dialect)))


async def table_exists(database: Database, name: str) -> bool:
    try:
        await database.fetch_all(sa.select(sa.literal_column("1")).select_from(sa.table(name)).limit(1))
    except Exception:  # each driver names a missing table its own way
        return False
    return True
