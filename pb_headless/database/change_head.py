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

import contextlib
import hashlib
from collections.abc import Hashable

from databases import Database

from pb_headless.database import internals
from pb_headless.database.dialect import dialect_name

PREFIX = "pbchg_"
HEAD_ID = 3  # the `pb_state` row holding the change log's head (the last position given out)
PRUNED_ID = 4  # the `pb_state` row holding the last position pruning removed
MARIADB_SUFFIXES = {"ai": "INSERT", "au": "UPDATE", "ad": "DELETE"}  # one trigger per event there

_PG_VERSION = (
    f"SELECT (SELECT version FROM pb_state WHERE id = {HEAD_ID}) AS head, "
    "(SELECT string_agg(t.oid::text, ',' ORDER BY t.oid) FROM pg_trigger t "
    "WHERE t.tgrelid = to_regclass(quote_ident(:table)) "
    "AND left(t.tgname, 6) = :prefix AND t.tgenabled IN ('O', 'A')) AS trigger_id"
)
_MARIADB_VERSION = (
    f"SELECT (SELECT version FROM pb_state WHERE id = {HEAD_ID}) AS head, "
    "(SELECT CASE WHEN COUNT(*) = 3 THEN GROUP_CONCAT(CREATED ORDER BY TRIGGER_NAME) END "
    "FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() "
    "AND EVENT_OBJECT_TABLE = :table AND LEFT(TRIGGER_NAME, 6) = :prefix) AS trigger_id"
)


def trigger_base(table: str, key: str, rules: str = "") -> str:
    """The name of a table's change-log trigger (PostgreSQL), or the stem of its three (SQLite,
    MariaDB: `_ai`, `_au`, `_ad`). The digest covers the key column and the digest of the objects'
    rules (changes/visibility.py), so a table whose key or rules changed gets new triggers."""
    named = f"{table}\0{key}" + (f"\0{rules}" if rules else "")
    digest = hashlib.sha1(named.encode()).hexdigest()[:8]
    return f"{PREFIX}{table[:40]}_{digest}"


# The same two in their drivers' own form: a deep page reads the version once or twice, and building
# and compiling the text through `databases` cost three times the round trip (docs/performance.md).
_PG_VERSION_DRIVER = _PG_VERSION.replace(":table", "$1").replace(":prefix", "$2")
_MARIADB_VERSION_DRIVER = _MARIADB_VERSION.replace(":table", "%(table)s").replace(":prefix", "%(prefix)s")


async def read_version(database: Database, table: str, key: str) -> Hashable | None:
    """(head, the triggers' identity) for `table` on PostgreSQL and MariaDB; None when the table has
    no enabled change-log trigger, the change log is not installed, or on another database."""
    dialect = dialect_name(database)
    if dialect not in ("postgresql", "mysql"):
        return None
    # Any change-log trigger of the table: its name's digest follows the objects' rules, which this
    # layer does not know (a table has one set at a time; while two are, the identity differs too).
    connection = database.connection()
    async with connection, internals.query_lock(connection) or contextlib.nullcontext():
        raw = internals.driver(connection)
        if dialect == "postgresql":
            row = await raw.fetchrow(_PG_VERSION_DRIVER, table, PREFIX)
        else:
            async with raw.cursor() as cursor:
                await cursor.execute(_MARIADB_VERSION_DRIVER, {"table": table, "prefix": PREFIX})
                row = await cursor.fetchone()
    if row is None or row[0] is None or row[1] is None:
        return None
    return (int(row[0]), str(row[1]))


async def change_triggers(database: Database, table: str | None = None) -> dict[str, str]:
    """The change log's triggers in the database's current schema (on `table` only, if given): name →
    table."""
    dialect = dialect_name(database)
    if dialect == "sqlite":
        query = "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"
    elif dialect == "postgresql":
        query = (
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace"
        )
    else:
        query = (
            "SELECT trigger_name, event_object_table FROM information_schema.triggers "
            "WHERE trigger_schema = DATABASE()"
        )
    rows = await database.fetch_all(query)
    return {
        str(row[0]): str(row[1])
        for row in rows
        if str(row[0]).startswith(PREFIX) and table in (None, str(row[1]))
    }


async def drop_change_triggers(database: Database, table: str) -> None:
    """Before a column of `table` is dropped, on SQLite and MariaDB: the change log's triggers there name
    the columns filters read, and SQLite refuses to drop a column a trigger names (MariaDB drops it,
    and the trigger fails at the next write). They are made again when the objects are next published
    (changes/triggers.py `sync_triggers`). PostgreSQL's trigger names no column: nothing to do."""
    dialect = dialect_name(database)
    if dialect == "postgresql":
        return
    for name in await change_triggers(database, table):
        quoted = (
            "`" + name.replace("`", "``") + "`" if dialect == "mysql" else '"' + name.replace('"', '""') + '"'
        )
        await database.execute(f"DROP TRIGGER IF EXISTS {quoted}")
