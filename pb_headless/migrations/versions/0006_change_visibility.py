"""change log visibility: which objects served each changed row before and after the change"""

import sqlalchemy as sa
from alembic import op

from pb_headless.migrations.guards import column_exists

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Entries written before this step keep NULL in both: "not known", read as seen by every object
    # that publishes the table, as they were until now. Each column is guarded: MariaDB commits DDL
    # at once, so a step stopped half-way runs again from the top.
    for name in ("seen_before", "seen_after"):
        if op.get_context().as_sql or not column_exists("pb_changes", name):
            op.add_column("pb_changes", sa.Column(name, sa.Text, nullable=True))


def downgrade() -> None:
    op.drop_column("pb_changes", "seen_after")
    op.drop_column("pb_changes", "seen_before")
