"""idempotency: the kept answers of POSTs sent with an Idempotency-Key (docs/caching.md)"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

from pb_headless.migrations.guards import index_exists, table_exists

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Each statement is guarded: on MariaDB, where DDL commits at once, a step stopped half-way runs
    # again from the top.
    if not table_exists("pb_idempotency"):
        op.create_table(
            "pb_idempotency",
            sa.Column("token_id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("idempotency_key", sa.String(255), primary_key=True),
            sa.Column("request_hash", sa.String(64), nullable=False),
            sa.Column("status", sa.Integer, nullable=True),
            sa.Column("answer", sa.Text().with_variant(mysql.LONGTEXT(), "mysql"), nullable=True),
            sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("expires_at", sa.DateTime, nullable=False),
        )
    if not index_exists("pb_idempotency", "pb_idempotency_expires"):
        op.create_index("pb_idempotency_expires", "pb_idempotency", ["expires_at"])


def downgrade() -> None:
    op.drop_index("pb_idempotency_expires", table_name="pb_idempotency")
    op.drop_table("pb_idempotency")
