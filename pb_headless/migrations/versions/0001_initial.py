"""the 0.1.0 schema: tokens, settings, the shared version, the constructor's API tabs"""

import sqlalchemy as sa
from alembic import op

from pb_headless.migrations.guards import table_exists

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Exactly what 0.1.0's `install` created (pb_headless/tables.py at commit 673b4f9); a database it
    # made is stamped 0001 instead of running this step.
    if not table_exists("pb_api_tokens"):
        op.create_table(
            "pb_api_tokens",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("name", sa.String(100), nullable=False, unique=True),
            sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
            sa.Column("prefix", sa.String(8), nullable=False),
            sa.Column("scopes", sa.Text, nullable=False),
            sa.Column("expires_at", sa.DateTime, nullable=True),
            sa.Column("user_id", sa.String(64), nullable=True),
            sa.Column("enabled", sa.Boolean, nullable=False),
            sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=False),
            sa.Column("last_used_at", sa.DateTime, nullable=True),
        )
    if not table_exists("pb_system_settings"):
        op.create_table(
            "pb_system_settings",
            sa.Column("key", sa.String(100), primary_key=True),
            sa.Column("value", sa.Text, nullable=False),
        )
    if not table_exists("pb_state"):
        op.create_table(
            "pb_state",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("version", sa.BigInteger, nullable=False),
        )
    if not table_exists("pb_constructor_api"):
        op.create_table(
            "pb_constructor_api",
            sa.Column("table_name", sa.String(64), primary_key=True),
            sa.Column("enabled", sa.Boolean, nullable=False),
            sa.Column("fields", sa.Text, nullable=False),
            sa.Column("operations", sa.Text, nullable=False),
            sa.Column("url_name", sa.String(100), nullable=True),
            sa.Column("writable", sa.Text, nullable=True),
            sa.Column("filterable", sa.Text, nullable=True),
            sa.Column("sortable", sa.Text, nullable=True),
            sa.Column("updated_at", sa.DateTime, nullable=False),
        )


def downgrade() -> None:
    for name in ("pb_constructor_api", "pb_state", "pb_system_settings", "pb_api_tokens"):
        op.drop_table(name)
