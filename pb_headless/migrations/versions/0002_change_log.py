"""change log: pb_changes, one row per committed change of a published table (docs/changes.md)"""

import sqlalchemy as sa
from alembic import op

from pb_headless.migrations.guards import index_exists, table_exists

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Each statement is guarded: on MariaDB, where DDL commits at once, a step stopped half-way runs
    # again from the top.
    if not table_exists("pb_changes"):
        op.create_table(
            "pb_changes",
            sa.Column(
                "position",
                sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                primary_key=True,
                autoincrement=True,
            ),
            sa.Column("table_name", sa.String(64), nullable=False),
            sa.Column("row_key", sa.String(255), nullable=False),
            sa.Column("op", sa.String(6), nullable=False),
            sa.Column("changed_at", sa.DateTime, nullable=False),
        )
    if not index_exists("pb_changes", "pb_changes_table_position"):
        op.create_index("pb_changes_table_position", "pb_changes", ["table_name", "position"])


def downgrade() -> None:
    op.drop_index("pb_changes_table_position", table_name="pb_changes")
    op.drop_table("pb_changes")
