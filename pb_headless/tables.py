"""The library's own tables and the installer that creates them."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from databases import Database
from sqlalchemy.dialects import mysql

from pb_headless.database.database_errors import is_duplicate_key
from pb_headless.migrations.catalog import existing_tables as existing_tables  # where it was

metadata = sa.MetaData()

tokens = sa.Table(
    "pb_api_tokens",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("prefix", sa.String(8), nullable=False),
    sa.Column("scopes", sa.Text, nullable=False),
    sa.Column("expires_at", sa.DateTime, nullable=True),
    sa.Column("user_id", sa.String(64), nullable=True),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("last_used_at", sa.DateTime, nullable=True),
)

settings = sa.Table(
    "pb_system_settings",
    metadata,
    sa.Column("key", sa.String(100), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

# One row whose version moves on every change another instance must see (tokens, settings,
# published tables), so each instance rebuilds its compiled state only when it moved.
state = sa.Table(
    "pb_state",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("version", sa.BigInteger, nullable=False),
)

# The API tab of each constructor table (docs/constructor.md). The table
# definitions are the host's; what is published of them lives here so every instance sees it.
# Name lists are JSON arrays; NULL in writable/filterable/sortable means "the ticked fields".
constructor_api = sa.Table(
    "pb_constructor_api",
    metadata,
    sa.Column("table_name", sa.String(64), primary_key=True),
    sa.Column("enabled", sa.Boolean, nullable=False, default=False),
    sa.Column("fields", sa.Text, nullable=False),
    sa.Column("operations", sa.Text, nullable=False),
    sa.Column("url_name", sa.String(100), nullable=True),
    sa.Column("writable", sa.Text, nullable=True),
    sa.Column("filterable", sa.Text, nullable=True),
    sa.Column("sortable", sa.Text, nullable=True),
    sa.Column("updated_at", sa.DateTime, nullable=False),
)

# The change log (docs/changes.md): one row per committed create, update or delete of a row of a
# published table, written in the writing transaction (by triggers the library installs), so an entry
# exists if and only if its change committed. `position` only grows; `row_key` is the primary key as text.
changes = sa.Table(
    "pb_changes",
    metadata,
    sa.Column(
        "position",
        sa.BigInteger().with_variant(sa.Integer, "sqlite"),
        primary_key=True,
        autoincrement=True,
    ),
    sa.Column("table_name", sa.String(64), nullable=False),
    sa.Column("row_key", sa.String(255), nullable=False),
    sa.Column("op", sa.String(6), nullable=False),  # create | update | delete
    sa.Column("changed_at", sa.DateTime, nullable=False),
    # The objects that served the row before and after the change, each as `|name|` (empty: none);
    # NULL in both when the trigger could not tell (docs/changes.md, "Which changes an object shows").
    sa.Column("seen_before", sa.Text, nullable=True),
    sa.Column("seen_after", sa.Text, nullable=True),
    # The columns an update left as they were (of those the triggers watch), `,name,` each (`,` alone:
    # none); NULL: not known (a create, a delete). Migration 0008.
    sa.Column("unchanged", sa.Text, nullable=True),
    sa.Index("pb_changes_table_position", "table_name", "position"),
)

# Kept answers of POSTs sent with an Idempotency-Key (docs/caching.md), one row per token and key:
# inserting it is the claim every instance races for; `status` stays NULL while the first request
# runs. Rows past `expires_at` are pruned by the writers (pb_headless/idempotency/). The token is named
# by the hash of its value, never its row id, which SQLite hands to the next token once the newest is
# deleted; deleting or reissuing a token deletes its rows.
idempotency = sa.Table(
    "pb_idempotency",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("idempotency_key", sa.String(255), primary_key=True),
    sa.Column("request_hash", sa.String(64), nullable=False),
    sa.Column("status", sa.Integer, nullable=True),
    sa.Column("answer", sa.Text().with_variant(mysql.LONGTEXT(), "mysql"), nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("expires_at", sa.DateTime, nullable=False),
    sa.Index("pb_idempotency_expires", "expires_at"),
)

# docs/cors-and-rate-limits.md: system settings created by the installer, with their defaults.
DEFAULT_SETTINGS: dict[str, str] = {
    "service_cors_origins": "",
    "service_cors_paths": "api/*",
    "service_cors_methods": "GET,POST,PUT,PATCH,DELETE,OPTIONS",
    "service_cors_headers": "Authorization,Content-Type,X-Requested-With,X-API-Key,If-Match,If-None-Match,"
    "Idempotency-Key",
    "service_cors_credentials": "no",
    "service_cors_max_age": "86400",
    "service_webhooks_allow_private": "no",  # docs/webhooks.md: deliveries to private addresses
    "service_changes_retention_days": "30",  # docs/changes.md: how long the change log keeps entries
}


async def install(database: Database) -> None:
    """Bring the library's tables to this release's version (docs/upgrading.md), then add the default
    rows; running it again changes nothing, and on a database already there costs two small reads."""
    from pb_headless.migrations.migrate import upgrade  # Alembic loads on first use, not with the tables

    await upgrade(database, metadata=metadata)
    # Row 1: the version of tokens, settings and publications; row 2: the data version (records
    # written through the library); rows 3 and 4: the change log's head and how far it was pruned
    # (docs/changes.md). Inserting a missing row is also how an older database gets rows 2 to 4.
    rows: dict[object, dict] = {1: {"id": 1, "version": 1}, 2: {"id": 2, "version": 1}}
    rows.update({3: {"id": 3, "version": 0}, 4: {"id": 4, "version": 0}})
    await _insert_missing(database, state, "id", rows)
    await _insert_missing(
        database,
        settings,
        "key",
        {key: {"key": key, "value": value} for key, value in DEFAULT_SETTINGS.items()},
    )


async def _insert_missing(database: Database, table: sa.Table, key: str, rows: dict[object, dict]) -> None:
    present = {row[0] for row in await database.fetch_all(sa.select(table.c[key]))}
    for value, row in rows.items():
        if value in present:
            continue
        try:
            await database.execute(table.insert().values(**row))
        except Exception as error:  # another installer won the race; the row is there
            if not is_duplicate_key(error):
                raise


# The webhooks' endpoints, deliveries and fan-out cursor (docs/webhooks.md; pb_headless/webhooks/ uses
# them). Migration 0003 creates exactly these, 0007 adds `filter`.
_BIG_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")  # SQLite autoincrements INTEGER only


@dataclass(frozen=True)
class WebhookTables:
    webhooks: sa.Table
    deliveries: sa.Table
    cursor: sa.Table


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


webhook_tables = WebhookTables(_webhooks(metadata), _deliveries(metadata), _cursor(metadata))
