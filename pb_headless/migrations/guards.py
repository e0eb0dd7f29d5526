"""What a revision file asks before it acts, so a step MariaDB half-applied (it has no transactional DDL)
can simply run again."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


def table_exists(name: str) -> bool:
    """Whether the table is there already. Offline (`pb-headless migrate --sql`) there is no database
    to ask: the SQL printed is the whole step, as the version table says it is due."""
    if op.get_context().as_sql:
        return False
    return sa.inspect(op.get_bind()).has_table(name)


def index_exists(table: str, name: str) -> bool:
    if op.get_context().as_sql:
        return False
    return any(index["name"] == name for index in sa.inspect(op.get_bind()).get_indexes(table))


def column_exists(table: str, name: str) -> bool:
    """Whether the table is there with this column (offline: taken as there, as the version says)."""
    if op.get_context().as_sql:
        return True
    inspector = sa.inspect(op.get_bind())
    return inspector.has_table(table) and any(
        column["name"] == name for column in inspector.get_columns(table)
    )
