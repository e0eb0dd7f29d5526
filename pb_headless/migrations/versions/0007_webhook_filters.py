"""webhook filters: an endpoint may carry the filters and search of a list (docs/webhooks.md)"""

import sqlalchemy as sa
from alembic import op

from pb_headless.migrations.guards import column_exists

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL: no filter, every change of the endpoint's objects, as until now. Guarded: MariaDB commits
    # DDL at once, so a step stopped half-way runs again from the top.
    if op.get_context().as_sql or not column_exists("pb_webhooks", "filter"):
        op.add_column("pb_webhooks", sa.Column("filter", sa.Text, nullable=True))


def downgrade() -> None:
    op.drop_column("pb_webhooks", "filter")
