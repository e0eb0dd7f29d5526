"""idempotency by token hash: kept answers bound to the token's value, not its reusable row id"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

from pb_headless.migrations.guards import column_exists, index_exists, table_exists

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_NEXT = "pb_idempotency_next"


def upgrade() -> None:
    # A row id is reused on SQLite after the newest token is deleted, so kept answers are keyed by the
    # hash of the token's value instead. The table is rebuilt (a primary key changes), each statement
    # guarded so that a step MariaDB stopped half-way (its DDL commits at once) runs again from the top.
    moving = column_exists("pb_idempotency", "token_id")
    if moving:
        if not table_exists(_NEXT):
            _create(_NEXT)
        op.execute(sa.text(f"DELETE FROM {_NEXT}"))
        # Answers of tokens still there move over; those of deleted tokens are dropped.
        op.execute(
            sa.text(
                f"INSERT INTO {_NEXT} (token_hash, idempotency_key, request_hash, status, answer, "
                "created_at, expires_at) SELECT t.token_hash, i.idempotency_key, i.request_hash, i.status, "
                "i.answer, i.created_at, i.expires_at FROM pb_idempotency i "
                "JOIN pb_api_tokens t ON t.id = i.token_id"
            )
        )
        op.drop_table("pb_idempotency")
    if moving or table_exists(_NEXT):
        op.rename_table(_NEXT, "pb_idempotency")
    if not index_exists("pb_idempotency", "pb_idempotency_expires"):
        op.create_index("pb_idempotency_expires", "pb_idempotency", ["expires_at"])


def _create(name: str) -> None:
    op.create_table(
        name,
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("idempotency_key", sa.String(255), primary_key=True),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("status", sa.Integer, nullable=True),
        sa.Column("answer", sa.Text().with_variant(mysql.LONGTEXT(), "mysql"), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    # Kept answers live a day: going back drops them rather than guess a token id.
    op.drop_index("pb_idempotency_expires", table_name="pb_idempotency")
    op.drop_table("pb_idempotency")
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
    op.create_index("pb_idempotency_expires", "pb_idempotency", ["expires_at"])
