"""The change log's head and its triggers, as the database layer reads them (docs/changes.md).

The change log (pb_headless/changes/) records every committed write to a published table through
triggers the library installs; each trigger moves the head, row `HEAD_ID` of `pb_state`, in the
writing transaction, and a writer that comes second waits for the first to commit. So on PostgreSQL
and MariaDB, while a table's triggers are in place, the head only grows and moves with every commit
that changes that table, whoever makes it: two reads that find the same head and the same triggers
saw the same rows. `read_version` gives that pair as one value (database/positions.py keeps deep-page
keys with it); None when the table has no working trigger, or the change log is not installed.

The triggers' identity is part of the version: a trigger dropped (writes then go unrecorded) and made
again has another identity (PostgreSQL: its oid; MariaDB: its creation time, in hundredths of a
second), so keys noted before it was dropped are not used after.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable

from databases import Database

from pb_headless.database.dialect import dialect_name

PREFIX = "pbchg_"
HEAD_ID = 3  # the `pb_state` row holding the change log's head (the last position given out)
PRUNED_ID = 4  # the `pb_state` row holding the last position pruning removed
MARIADB_SUFFIXES = {"ai": "INSERT", "au": "UPDATE", "ad": "DELETE"}  # one trigger per event there

_PG_VERSION = (
    f"SELECT (SELECT version FROM pb_state WHERE id = {HEAD_ID}) AS head, "
    "(SELECT t.oid FROM pg_trigger t WHERE t.tgrelid = to_regclass(quote_ident(:table)) "
    "AND t.tgname = :trigger AND t.tgenabled IN ('O', 'A')) AS trigger_id"
)
_MARIADB_VERSION = (
    f"SELECT (SELECT version FROM pb_state WHERE id = {HEAD_ID}) AS head, "
    "(SELECT CASE WHEN COUNT(*) = 3 THEN GROUP_CONCAT(CREATED ORDER BY TRIGGER_NAME) END "
    "FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() "
    "AND EVENT_OBJECT_TABLE = :table AND TRIGGER_NAME IN (:ai, :au, :ad)) AS trigger_id"
)


def trigger_base(table: str, key: str) -> str:
    """The name of a table's change-log trigger (PostgreSQL), or the stem of its three (SQLite,
    MariaDB: `_ai`, `_au`, `_ad`). The digest covers the key column, so a table whose key changed
    gets new triggers."""
    digest = hashlib.sha1(f"{table}\0{key}".encode()).hexdigest()[:8]
    return f"{PREFIX}{table[:40]}_{digest}"


async def read_version(database: Database, table: str, key: str) -> Hashable | None:
    """(head, the triggers' identity) for `table` on PostgreSQL and MariaDB; None when the table has
    no enabled change-log trigger, the change log is not installed, or on another database."""
    dialect = dialect_name(database)
    base = trigger_base(table, key)
    if dialect == "postgresql":
        query, values = _PG_VERSION, {"table": table, "trigger": base}
    elif dialect == "mysql":
        names = {suffix: f"{base}_{suffix}" for suffix in MARIADB_SUFFIXES}
        query, values = _MARIADB_VERSION, {"table": table, **names}
    else:
        return None
    row = await database.fetch_one(query, values)
    if row is None or row[0] is None or row[1] is None:
        return None
    return (int(row[0]), str(row[1]))
