"""webhooks: endpoints, deliveries and the fan-out cursor (docs/webhooks.md)"""

import sqlalchemy as sa
from alembic import op

from pb_headless.migrations.guards import index_exists, table_exists

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_BIG_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    # Each statement is guarded: on MariaDB, where DDL commits at once, a step stopped half-way runs
    # again from the top.
    if not table_exists("pb_webhooks"):
        op.create_table(
            "pb_webhooks",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("name", sa.String(100), nullable=False, unique=True),
            sa.Column("url", sa.String(2000), nullable=False),
            sa.Column("objects", sa.Text, nullable=False),
            sa.Column("events", sa.Text, nullable=False),
            sa.Column("secret", sa.String(100), nullable=False),
            sa.Column("enabled", sa.Boolean, nullable=False),
            sa.Column("failing_since", sa.DateTime, nullable=True),
            sa.Column("note", sa.Text, nullable=True),
            sa.Column("created_at", sa.DateTime, nullable=False),
            sa.Column("updated_at", sa.DateTime, nullable=False),
        )
    if not table_exists("pb_webhook_deliveries"):
        op.create_table(
            "pb_webhook_deliveries",
            sa.Column("id", _BIG_ID, primary_key=True, autoincrement=True),
            sa.Column("webhook_id", sa.Integer, nullable=False),
            sa.Column("position", sa.BigInteger, nullable=False),
            sa.Column("message_id", sa.String(40), nullable=False),
            sa.Column("object_name", sa.String(100), nullable=False),
            sa.Column("event", sa.String(6), nullable=False),
            sa.Column("row_key", sa.String(255), nullable=False),
            sa.Column("changed_at", sa.DateTime, nullable=False),
            sa.Column("status", sa.String(8), nullable=False),
            sa.Column("tries", sa.Integer, nullable=False),
            sa.Column("next_try_at", sa.DateTime, nullable=True),
            sa.Column("last_try_at", sa.DateTime, nullable=True),
            sa.Column("answer_code", sa.Integer, nullable=True),
            sa.Column("duration_ms", sa.Integer, nullable=True),
            sa.Column("error", sa.String(255), nullable=True),
            sa.Column("created_at", sa.DateTime, nullable=False),
            sa.UniqueConstraint("webhook_id", "position", "object_name", name="pb_webhook_deliveries_once"),
        )
    if not index_exists("pb_webhook_deliveries", "pb_webhook_deliveries_due"):
        op.create_index("pb_webhook_deliveries_due", "pb_webhook_deliveries", ["status", "next_try_at"])
    if not index_exists("pb_webhook_deliveries", "pb_webhook_deliveries_record"):
        op.create_index(
            "pb_webhook_deliveries_record",
            "pb_webhook_deliveries",
            ["webhook_id", "object_name", "row_key", "status"],
        )
    if not table_exists("pb_webhook_cursor"):
        op.create_table(
            "pb_webhook_cursor",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("position", sa.BigInteger, nullable=False),
        )


def downgrade() -> None:
    op.drop_table("pb_webhook_cursor")
    op.drop_index("pb_webhook_deliveries_record", table_name="pb_webhook_deliveries")
    op.drop_index("pb_webhook_deliveries_due", table_name="pb_webhook_deliveries")
    op.drop_table("pb_webhook_deliveries")
    op.drop_table("pb_webhooks")
