"""The database triggers that write the change log: installed on published tables, removed from others.

Every trigger does the same two things in the writing transaction (docs/changes.md, "The triggers"):
it moves the change log's head (row 3 of `pb_state`) by one, and inserts into `pb_changes` an entry
at that new head with the table, the row's key as text, the kind of change, the UTC time, and the
objects that served the row before and after the change (visibility.py). Moving
one row locks it until the writer commits, so a writer that comes second waits for the first to
commit before it takes the next position: positions become visible in order, never with a hole a
reader could step over (pb_headless/changes/log.py relies on it). On PostgreSQL the trigger is a
constraint trigger deferred to the commit, so the head is locked only for the commit itself; SQLite
and MariaDB have no deferred triggers, and theirs take it at the write.

Names: `pbchg_<table>_<digest>` plus `_ai`, `_au`, `_ad` on SQLite and MariaDB (one trigger per
event); one constraint trigger `pbchg_<table>_<digest>` calling the function `pb_changes_record()` on
PostgreSQL.
The digest covers the table, its key column and the objects' rules, so a table whose key or rules
changed gets new triggers. On PostgreSQL the rules are the trigger's second argument, a statement the
function runs on OLD and on NEW.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from databases import Database
from sqlalchemy.engine import Dialect

from pb_headless.changes.visibility import WatchedTable, escape_colons, plain_dialect, rule_digest, seen_sql

# The names and rows the database layer reads too (its deep pages, database/change_head.py).
from pb_headless.database.change_head import HEAD_ID, MARIADB_SUFFIXES, change_triggers, trigger_base
from pb_headless.database.change_head import PRUNED_ID as PRUNED_ID
from pb_headless.database.database_errors import is_duplicate_key, is_unavailable
from pb_headless.database.dialect import dialect_name

log = logging.getLogger("pb_headless")

_SUFFIXES = MARIADB_SUFFIXES
AT_COMMIT = "\0at-commit"  # part of a PostgreSQL trigger's digest: it numbers its entries at commit
CHANGED = "\0unchanged"  # part of every trigger's digest: it records the columns an update left alone


Tables = Mapping[str, "WatchedTable | str"]  # table → what its triggers record (a bare key: no visibility)


def watched(tables: Tables) -> dict[str, WatchedTable]:
    return {table: WatchedTable(w) if isinstance(w, str) else w for table, w in tables.items()}


def wanted_triggers(dialect: str, tables: Tables) -> dict[str, str]:
    """Trigger name → table, for published tables given as table → what they record."""
    wanted: dict[str, str] = {}
    sql_dialect = plain_dialect(dialect)
    for table, watch in watched(tables).items():
        rules = rule_digest(sql_dialect, watch)
        if dialect == "postgresql":
            # A trigger that numbers at commit and records unchanged columns is named apart from an
            # older release's, so an upgrade replaces it (and the function it calls).
            wanted[trigger_base(table, watch.key, rules + AT_COMMIT + CHANGED)] = table
        else:
            # Their SQL lists the watched columns: a column watched or no longer watched makes them again.
            columns = ",".join(watch.tracked)
            base = trigger_base(table, watch.key, rules + CHANGED + columns)
            wanted.update({f"{base}_{suffix}": table for suffix in _SUFFIXES})
    return wanted


async def present_triggers(database: Database) -> dict[str, str]:
    """The change-log triggers in the database's current schema: name → table."""
    return await change_triggers(database)


async def sync_triggers(database: Database, tables: Tables) -> frozenset[str]:
    """Make the change-log triggers exactly those of `tables` (table → what it records); the tables whose
    every trigger is in place (a table the database refused one for is not among them).

    Safe to run from several instances at once: every statement is one another instance may already
    have run (`IF NOT EXISTS`, `IF EXISTS`, or a duplicate refused and ignored).
    """
    dialect = dialect_name(database)
    wanted = wanted_triggers(dialect, tables)
    watches = watched(tables)
    present = await present_triggers(database)
    for name, table in present.items():
        if wanted.get(name) != table:
            await database.execute(_drop(dialect, name, table))
    missing = {name: table for name, table in wanted.items() if present.get(name) != table}
    refused: set[str] = set()
    if not missing:
        return frozenset(tables)
    if dialect == "postgresql":
        await _create_pg_function(database)
    for name, table in missing.items():
        try:
            await database.execute(escape_colons(_create(dialect, name, table, watches[table])))
        except Exception as error:
            if is_duplicate_key(error) or "already exists" in str(error):
                continue  # another instance made it between our look and our create
            if is_unavailable(error):
                raise
            # A view, or a database user without the TRIGGER privilege: serving goes on, unrecorded.
            log.warning("pb_headless: no change log for table %s: its trigger was refused: %s", table, error)
            refused.add(table)
    return frozenset(tables) - refused


# PostgreSQL refuses two CREATE OR REPLACE FUNCTION of one function at once ("tuple concurrently
# updated"), as instances starting together would send; a session lock lets them take turns.
_PG_FUNCTION_LOCK = 0x7062636867667563


async def _create_pg_function(database: Database) -> None:
    # A session lock holds only on the connection that took it: the lock, the CREATE and the unlock
    # all go through one connection (from a pool, each statement could take another and lock nothing).
    async with database.connection() as connection:
        await connection.execute(f"SELECT pg_advisory_lock({_PG_FUNCTION_LOCK})")
        try:
            await connection.execute(_PG_FUNCTION)
        finally:
            await connection.execute(f"SELECT pg_advisory_unlock({_PG_FUNCTION_LOCK})")


def _quote(dialect: str, name: str) -> str:
    if dialect == "mysql":
        return "`" + name.replace("`", "``") + "`"
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _drop(dialect: str, name: str, table: str) -> str:
    if dialect == "postgresql":
        return f"DROP TRIGGER IF EXISTS {_quote(dialect, name)} ON {_quote(dialect, table)}"
    return f"DROP TRIGGER IF EXISTS {_quote(dialect, name)}"


def _create(dialect: str, name: str, table: str, watch: WatchedTable) -> str:
    quoted_table = _quote(dialect, table)
    sql_dialect = plain_dialect(dialect)
    key = watch.key
    if dialect == "postgresql":
        arguments = [_literal(key)]
        seen = seen_sql(sql_dialect, watch, "($1)")
        if seen is not None:
            arguments.append(_literal(seen))
        # A constraint trigger deferred to the commit: it runs, with OLD and NEW as they were at the
        # write, when the transaction commits, so the head stays locked only from there to the end
        # of the commit rather than from the write on (docs/changes.md, "What is recorded").
        return (
            f"CREATE CONSTRAINT TRIGGER {_quote(dialect, name)} AFTER INSERT OR UPDATE OR DELETE "
            f"ON {quoted_table} DEFERRABLE INITIALLY DEFERRED "
            f"FOR EACH ROW EXECUTE FUNCTION pb_changes_record({', '.join(arguments)})"
        )
    event = _SUFFIXES[name.rsplit("_", 1)[1]]
    row = "OLD" if event == "DELETE" else "NEW"
    op = {"INSERT": "create", "UPDATE": "update", "DELETE": "delete"}[event]
    before, after = _seen(sql_dialect, watch, event)
    moved = f"OLD.{_quote(dialect, key)} <> NEW.{_quote(dialect, key)}"
    if event == "UPDATE" and before != "NULL":  # a moved key's new row was served by no one before
        before = f"CASE WHEN {moved} THEN '' ELSE {before} END"
    unchanged = _unchanged(dialect, watch) if event == "UPDATE" else "NULL"
    if event == "UPDATE":  # a key that changed: the new key's row had no values before
        unchanged = f"CASE WHEN {moved} THEN NULL ELSE {unchanged} END"
    body = [_entry(dialect, table, f"{row}.{_quote(dialect, key)}", op, before, after, unchanged)]
    if event == "UPDATE":  # a key that changed: the old key's row is gone
        gone = "NULL" if after == "NULL" else "''"
        served = _seen(sql_dialect, watch, "DELETE")[0]
        old_entry = _entry(dialect, table, f"OLD.{_quote(dialect, key)}", "delete", served, gone)
        if dialect == "sqlite":
            body.insert(0, old_entry.replace("WHERE id = 3", f"WHERE id = 3 AND {moved}"))
        else:
            body.insert(0, f"IF {moved} THEN {old_entry} END IF;")
    exists = "IF NOT EXISTS " if dialect in ("sqlite", "mysql") else ""
    return (
        f"CREATE TRIGGER {exists}{_quote(dialect, name)} AFTER {event} ON {quoted_table} "
        f"FOR EACH ROW BEGIN {' '.join(body)} END"
    )


def _seen(sql_dialect: Dialect, watch: WatchedTable, event: str) -> tuple[str, str]:
    """SQL for the entry's `seen_before` and `seen_after`: NULL when the table records no visibility,
    '' for the side a create or a delete has no row on."""
    old, new = seen_sql(sql_dialect, watch, "OLD"), seen_sql(sql_dialect, watch, "NEW")
    if old is None or new is None:
        return "NULL", "NULL"
    return ("''" if event == "INSERT" else old), ("''" if event == "DELETE" else new)


def _entry(
    dialect: str, table: str, key: str, op: str, before: str, after: str, unchanged: str = "NULL"
) -> str:
    """Move the head, then write the entry at it: two statements of a SQLite or MariaDB trigger."""
    if dialect == "sqlite":
        as_text, now = f"CAST({key} AS TEXT)", "datetime('now')"
    else:
        as_text, now = f"CAST({key} AS CHAR)", "UTC_TIMESTAMP(6)"
    return (
        f"UPDATE pb_state SET version = version + 1 WHERE id = {HEAD_ID}; "
        "INSERT INTO pb_changes "
        "(position, table_name, row_key, op, changed_at, seen_before, seen_after, unchanged) "
        f"SELECT version, {_literal(table)}, {as_text}, '{op}', {now}, {before}, {after}, {unchanged} "
        f"FROM pb_state WHERE id = {HEAD_ID};"
    )


def _unchanged(dialect: str, watch: WatchedTable) -> str:
    """SQL for an update's `unchanged`: `,` then `name,` for each watched column (those filters and
    search read) whose value stayed as it was. A column not watched is never listed, so a reader takes
    it as possibly changed."""
    names = [name for name in watch.tracked if "," not in name]  # a name the list could not hold: never
    parts = ["','"]
    for name in names:
        old, new, listed = (
            f"OLD.{_quote(dialect, name)}",
            f"NEW.{_quote(dialect, name)}",
            _literal(name + ","),
        )
        if dialect == "sqlite":
            parts.append(f"CASE WHEN {old} IS {new} THEN {listed} ELSE '' END")
        else:
            parts.append(f"IF({old} <=> {new}, {listed}, '')")
    return " || ".join(parts) if dialect == "sqlite" else "CONCAT(" + ", ".join(parts) + ")"


# One function for every published table on PostgreSQL; the key column is the trigger's first
# argument, and the statement naming the objects that serve a row (`$1`) its second, if any (a trigger
# made by a release before 0.3 has none: its entries record no visibility).
_PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION pb_changes_record() RETURNS trigger LANGUAGE plpgsql AS $pb$
DECLARE
    old_key text;
    new_key text;
    old_seen text;
    new_seen text;
    unchanged text;
    head bigint;
BEGIN
    IF TG_OP <> 'INSERT' THEN old_key := to_jsonb(OLD) ->> TG_ARGV[0]; END IF;
    IF TG_OP <> 'DELETE' THEN new_key := to_jsonb(NEW) ->> TG_ARGV[0]; END IF;
    IF TG_NARGS > 1 THEN
        old_seen := '';
        new_seen := '';
        IF TG_OP <> 'INSERT' THEN EXECUTE 'SELECT ' || TG_ARGV[1] INTO old_seen USING OLD; END IF;
        IF TG_OP <> 'DELETE' THEN EXECUTE 'SELECT ' || TG_ARGV[1] INTO new_seen USING NEW; END IF;
    END IF;
    IF TG_OP = 'UPDATE' THEN  -- the columns whose values stayed as they were, `,name,` each
        SELECT ',' || COALESCE(string_agg(n.key || ',', '' ORDER BY n.key), '') INTO unchanged
        FROM jsonb_each(to_jsonb(NEW)) AS n WHERE n.value IS NOT DISTINCT FROM to_jsonb(OLD) -> n.key;
    END IF;
    IF TG_OP = 'UPDATE' AND old_key IS DISTINCT FROM new_key THEN
        UPDATE pb_state SET version = version + 1 WHERE id = {HEAD_ID} RETURNING version INTO head;
        INSERT INTO pb_changes (position, table_name, row_key, op, changed_at, seen_before, seen_after)
        VALUES (head, TG_TABLE_NAME, old_key, 'delete', timezone('UTC', clock_timestamp()),
                old_seen, CASE WHEN TG_NARGS > 1 THEN '' END);
        old_seen := CASE WHEN TG_NARGS > 1 THEN '' END;  -- the new key's row was served by no one before
        unchanged := NULL;  -- nor did it have values before
    END IF;
    UPDATE pb_state SET version = version + 1 WHERE id = {HEAD_ID} RETURNING version INTO head;
    INSERT INTO pb_changes (position, table_name, row_key, op, changed_at, seen_before, seen_after, unchanged)
    VALUES (head, TG_TABLE_NAME, COALESCE(new_key, old_key),
            CASE TG_OP WHEN 'INSERT' THEN 'create' WHEN 'UPDATE' THEN 'update' ELSE 'delete' END,
            timezone('UTC', clock_timestamp()), old_seen, new_seen, unchanged);
    RETURN NULL;
END
$pb$
"""
