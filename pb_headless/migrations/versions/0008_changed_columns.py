"""change log columns: which columns an update left as they were, so a filtered reader can tell a row
that never matched from one that left (docs/changes.md, "Filtered changes")"""

import sqlalchemy as sa
from alembic import op

from pb_headless.migrations.guards import column_exists

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL: not known (a create, a delete, an entry written before this step): read as "anything may
    # have changed", as until now. Guarded: MariaDB commits DDL at once, so a step stopped half-way
    # runs again from the top.
    if op.get_context().as_sql or not column_exists("pb_changes", "unchanged"):
        op.add_column("pb_changes", sa.Column("unchanged", sa.Text, nullable=True))


def downgrade() -> None:
    op.drop_column("pb_changes", "unchanged")
