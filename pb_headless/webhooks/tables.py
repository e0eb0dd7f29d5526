"""The webhooks' tables: endpoints, their deliveries (the outbox) and the fan-out cursor (docs/webhooks.md).

`pb_headless.tables` defines them on the library's shared `metadata` (so the installer creates them and
this module never imports it back); migration 0003 creates exactly these, 0007 adds `filter`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

_BIG_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")  # SQLite autoincrements INTEGER only


@dataclass(frozen=True)
class WebhookTables:
    webhooks: sa.Table
    deliveries: sa.Table
    cursor: sa.Table


def define_tables(metadata: sa.MetaData) -> WebhookTables:
    return WebhookTables(_webhooks(metadata), _deliveries(metadata), _cursor(metadata))


def _webhooks(metadata: sa.MetaData) -> sa.Table:
    return sa.Table(
        "pb_webhooks",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("objects", sa.Text, nullable=False),  # a JSON array of object names, or ["*"]
        sa.Column("events", sa.Text, nullable=False),  # a JSON array of create|update|delete
        # The filters and search of a list, as a query string (`filter[category]=news&search=x`);
        # NULL for none. Migration 0007.
        sa.Column("filter", sa.Text, nullable=True),
        # The signing secret must be read back to sign each delivery, so it is stored as issued
        # (docs/webhooks.md, "How the secret is kept"); nothing shows it after creation.
        sa.Column("secret", sa.String(100), nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False, default=True),
        sa.Column("failing_since", sa.DateTime, nullable=True),  # the first failure after the last success
        sa.Column("note", sa.Text, nullable=True),  # why the library disabled it, shown in lists
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )


# One row per (endpoint, object, change): written when the change is fanned out, then tried until it
# succeeds or its tries run out. A try in flight holds a lease (`next_try_at` in the near future), so
# an instance killed mid-try leaves the delivery to be tried again: at least once.
def _deliveries(metadata: sa.MetaData) -> sa.Table:
    return sa.Table(
        "pb_webhook_deliveries",
        metadata,
        sa.Column("id", _BIG_ID, primary_key=True, autoincrement=True),
        sa.Column("webhook_id", sa.Integer, nullable=False),
        sa.Column("position", sa.BigInteger, nullable=False),  # the change log entry
        sa.Column("message_id", sa.String(40), nullable=False),  # `webhook-id`, the same on every try
        sa.Column("object_name", sa.String(100), nullable=False),
        sa.Column("event", sa.String(6), nullable=False),  # create | update | delete
        sa.Column("row_key", sa.String(255), nullable=False),
        sa.Column("changed_at", sa.DateTime, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),  # pending | success | failed
        sa.Column("tries", sa.Integer, nullable=False, default=0),
        sa.Column("next_try_at", sa.DateTime, nullable=True),
        sa.Column("last_try_at", sa.DateTime, nullable=True),
        sa.Column("answer_code", sa.Integer, nullable=True),
        sa.Column("duration_ms", sa.Integer, nullable=True),
        sa.Column("error", sa.String(255), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("webhook_id", "position", "object_name", name="pb_webhook_deliveries_once"),
        sa.Index("pb_webhook_deliveries_due", "status", "next_try_at"),
        sa.Index("pb_webhook_deliveries_record", "webhook_id", "object_name", "row_key", "status"),
    )


# Row 1: the change log position up to which changes have been turned into deliveries.
def _cursor(metadata: sa.MetaData) -> sa.Table:
    return sa.Table(
        "pb_webhook_cursor",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("position", sa.BigInteger, nullable=False),
    )
