"""The change log's triggers as each database writes them, and what the database layer reads of them
(docs/changes.md, "The triggers"; the change log itself is changes/log.py `ChangeLog`).

A backend hands out one `ChangeTriggers` (database/backends.py `change_log_triggers`): SQLite and
MariaDB have three row triggers per table (`RowTriggers`, their SQL told apart by a `RowSyntax`),
PostgreSQL one constraint trigger deferred to the commit, calling one function
(`ConstraintTriggers`). Outside this module nothing knows which.

Every trigger does the same two things in the writing transaction: it moves the change log's head
(row `HEAD_ID` of `pb_state`) by one, and inserts into `pb_changes` an entry at that new head. Moving
one row locks it until the writer commits, so a writer that comes second waits for the first:
positions become visible in commit order, never with a hole a reader could step over.

On PostgreSQL and MariaDB, while a table's triggers are in place, the head only grows and moves with
every commit that changes that table, whoever makes it: two reads that find the same head and the
same triggers saw the same rows. `ChangeTriggers.version` gives that pair as one value
(database/positions.py keeps deep-page keys with it). The triggers' identity is part of it: a
trigger dropped and made again has another (PostgreSQL: its oid; MariaDB: its creation time), so
keys noted before are not used after.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from databases import Database
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import Dialect

from pb_headless.database import internals

PREFIX = "pbchg_"  # every change-log trigger's name starts with it
HEAD_ID = 3  # the `pb_state` row holding the change log's head (the last position given out)
PRUNED_ID = 4  # the `pb_state` row holding the last position pruning removed
AT_COMMIT = "\0at-commit"  # part of a PostgreSQL trigger's digest: it numbers its entries at commit
CHANGED = "\0unchanged"  # part of every trigger's digest: it records the columns an update left alone

# A colon before a word would read as a bind parameter where `databases` runs the statement as text.
_BIND_LIKE = re.compile(r"(?<![:\w\\]):(?=\w)")


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a table's triggers record, as SQL the changes package wrote for this database: the key
    column, the columns whose staying as they were an update records, and the `|name|` of each object
    serving the row read from OLD, from NEW and (PostgreSQL's dynamic statement) from `($1)`; None
    when the table records no visibility."""

    key: str
    tracked: tuple[str, ...] = ()
    seen_old: str | None = None
    seen_new: str | None = None
    seen_argument: str | None = None


def trigger_base(table: str, key: str, rules: str = "") -> str:
    """`pbchg_<table>_<digest>`: the digest covers the key column and what the triggers record, so a
    table whose key or rules changed gets new triggers."""
    named = f"{table}\0{key}" + (f"\0{rules}" if rules else "")
    digest = hashlib.sha1(named.encode()).hexdigest()[:8]
    return f"{PREFIX}{table[:40]}_{digest}"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class ChangeTriggers:
    """The change log's triggers on one database: their names, their DDL, and the catalog's view of them."""

    catalog_query: str  # name, table of every trigger in the current schema
    version_query: str | None = None  # (head, the triggers' identity) of :table; None: not served

    def __init__(self, database: Database, sql_dialect: Dialect) -> None:
        self.database = database
        # The dialect the triggers' SQL is written for: with named parameters, so that a literal `%`
        # stays one `%` (the statement's text is then handled as `databases` handles any).
        self.sql_dialect = sql_dialect

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def joined(self, parts: list[str]) -> str:
        """SQL joining the texts `parts` into one."""
        return " || ".join(f"({part})" for part in parts)

    def names(self, table: str, recorded: Recorded, rules: str) -> list[str]:
        """The names of the triggers `table` needs; `rules` is the digest of the objects' rules."""
        raise NotImplementedError

    async def prepare(self) -> None:
        """Whatever the triggers call, made before the first of them is."""

    def create(self, name: str, table: str, recorded: Recorded) -> str:
        """The statement making the trigger `name` on `table`."""
        raise NotImplementedError

    def drop(self, name: str, table: str) -> str:
        return f"DROP TRIGGER IF EXISTS {self.quote(name)}"

    async def present(self, table: str | None = None) -> dict[str, str]:
        """The change log's triggers in the current schema (on `table` only, if given): name → table."""
        rows = await self.database.fetch_all(self.catalog_query)
        return {
            str(row[0]): str(row[1])
            for row in rows
            if str(row[0]).startswith(PREFIX) and table in (None, str(row[1]))
        }

    async def execute(self, statement: str) -> None:
        await self.database.execute(_BIND_LIKE.sub(r"\\:", statement))

    async def drop_naming_columns(self, table: str) -> None:
        """Before a column of `table` is dropped: triggers whose SQL names columns go (SQLite refuses to
        drop a named column, MariaDB's trigger would fail at the next write); the next publication
        makes them again."""
        for name in await self.present(table):
            await self.database.execute(self.drop(name, table))

    async def version(self, table: str) -> Hashable | None:
        """(head, the triggers' identity) for `table`; None when the table has no enabled change-log
        trigger, the change log is not installed, or the database serves no such version."""
        if self.version_query is None:
            return None
        # Any change-log trigger of the table: its name's digest follows the objects' rules, which this
        # layer does not know (a table has one set at a time; while two are, the identity differs too).
        # Sent in the driver's own form: a deep page reads the version once or twice, and building and
        # compiling the text through `databases` cost three times the round trip (docs/performance.md).
        connection = self.database.connection()
        async with connection, internals.query_lock(connection) or contextlib.nullcontext():
            row = await self._version_row(internals.driver(connection), table)
        if row is None or row[0] is None or row[1] is None:
            return None
        return (int(row[0]), str(row[1]))

    async def _version_row(self, raw: Any, table: str) -> Any:
        """The version query's row, through the driver's connection `raw` (MariaDB's drivers)."""
        assert self.version_query is not None
        query = self.version_query.replace(":table", "%(table)s").replace(":prefix", "%(prefix)s")
        # aiomysql names its default cursor class `cursorclass`, asyncmy `_cursor_cls`.
        default = getattr(raw, "cursorclass", None) or raw._cursor_cls
        async with raw.cursor(_quiet_cursor(default)) as cursor:
            await cursor.execute(query, {"table": table, "prefix": PREFIX})
            return await cursor.fetchone()


@functools.cache
def _quiet_cursor(base: type) -> type:
    """The MariaDB driver's cursor class `base`, reading no warning back after a statement.

    The version read's only warning is "table skipped since its definition is being modified by
    concurrent DDL statement": read inside a transaction that already holds locks, information_schema
    skips a table whose definition is changing rather than wait for it. The read then counts no
    trigger and the version is None, which is the answer while the table changes (no deep-page key is
    kept or used). Left to itself, the driver would ask SHOW WARNINGS (a round trip) and raise the
    text as a Python warning: aiomysql through `warnings`, an error wherever warnings are errors.
    """

    class Quiet(base):
        async def _show_warnings(self, conn: Any) -> None:
            return None

    return Quiet


@dataclass(frozen=True, slots=True)
class RowSyntax:
    """How SQLite and MariaDB differ in the SQL of a row trigger."""

    as_text: str  # the key as text, `{}` the key
    now: str  # the UTC time
    same: str  # `{listed}` when `{old}` and `{new}` are the same value (NULLs alike), else ''
    concat: bool  # text is joined by CONCAT(a, b), not by a || b
    key_moved: str  # "where": a condition on the old key's entry; "if": an IF around it
    quote_char: str


SQLITE_ROWS = RowSyntax(
    as_text="CAST({} AS TEXT)",
    now="datetime('now')",
    same="CASE WHEN {old} IS {new} THEN {listed} ELSE '' END",
    concat=False,
    key_moved="where",
    quote_char='"',
)
MARIADB_ROWS = RowSyntax(
    as_text="CAST({} AS CHAR)",
    now="UTC_TIMESTAMP(6)",
    same="IF({old} <=> {new}, {listed}, '')",
    concat=True,
    key_moved="if",
    quote_char="`",
)
_EVENTS = {"ai": "INSERT", "au": "UPDATE", "ad": "DELETE"}  # one trigger per event


class RowTriggers(ChangeTriggers):
    """SQLite and MariaDB: `<base>_ai`, `_au`, `_ad`, each moving the head at the write."""

    def __init__(
        self, database: Database, sql_dialect: Dialect, syntax: RowSyntax, catalog_query: str
    ) -> None:
        super().__init__(database, sql_dialect)
        self.syntax = syntax
        self.catalog_query = catalog_query

    def quote(self, name: str) -> str:
        mark = self.syntax.quote_char
        return mark + name.replace(mark, mark + mark) + mark

    def names(self, table: str, recorded: Recorded, rules: str) -> list[str]:
        # Their SQL lists the watched columns: a column watched or no longer watched makes them again.
        base = trigger_base(table, recorded.key, rules + CHANGED + ",".join(recorded.tracked))
        return [f"{base}_{suffix}" for suffix in _EVENTS]

    def create(self, name: str, table: str, recorded: Recorded) -> str:
        event = _EVENTS[name.rsplit("_", 1)[1]]
        key = self.quote(recorded.key)
        row = "OLD" if event == "DELETE" else "NEW"
        op = {"INSERT": "create", "UPDATE": "update", "DELETE": "delete"}[event]
        before, after = _seen(recorded, event)
        moved = f"OLD.{key} <> NEW.{key}"
        if event == "UPDATE" and before != "NULL":  # a moved key's new row was served by no one before
            before = f"CASE WHEN {moved} THEN '' ELSE {before} END"
        unchanged = "NULL"
        if event == "UPDATE":  # a key that changed: the new key's row had no values before
            unchanged = f"CASE WHEN {moved} THEN NULL ELSE {self._unchanged(recorded)} END"
        body = [self._entry(table, f"{row}.{key}", op, before, after, unchanged)]
        if event == "UPDATE":  # a key that changed: the old key's row is gone
            gone = "NULL" if after == "NULL" else "''"
            old_entry = self._entry(table, f"OLD.{key}", "delete", _seen(recorded, "DELETE")[0], gone)
            if self.syntax.key_moved == "where":
                only_moved = f"WHERE id = {HEAD_ID} AND {moved}"
                body.insert(0, old_entry.replace(f"WHERE id = {HEAD_ID}", only_moved))
            else:
                body.insert(0, f"IF {moved} THEN {old_entry} END IF;")
        return (
            f"CREATE TRIGGER IF NOT EXISTS {self.quote(name)} AFTER {event} ON {self.quote(table)} "
            f"FOR EACH ROW BEGIN {' '.join(body)} END"
        )

    def _entry(self, table: str, key: str, op: str, before: str, after: str, unchanged: str = "NULL") -> str:
        """Move the head, then write the entry at it: two statements of the trigger."""
        return (
            f"UPDATE pb_state SET version = version + 1 WHERE id = {HEAD_ID}; "
            "INSERT INTO pb_changes "
            "(position, table_name, row_key, op, changed_at, seen_before, seen_after, unchanged) "
            f"SELECT version, {_literal(table)}, {self.syntax.as_text.format(key)}, '{op}', "
            f"{self.syntax.now}, {before}, {after}, {unchanged} FROM pb_state WHERE id = {HEAD_ID};"
        )

    def _unchanged(self, recorded: Recorded) -> str:
        """SQL for an update's `unchanged`: `,` then `name,` for each watched column (those filters and
        search read) whose value stayed as it was. A column not watched is never listed, so a reader
        takes it as possibly changed."""
        parts = ["','"]
        for name in recorded.tracked:
            if "," in name:  # a name the list could not hold: never listed
                continue
            old, new = f"OLD.{self.quote(name)}", f"NEW.{self.quote(name)}"
            parts.append(self.syntax.same.format(old=old, new=new, listed=_literal(name + ",")))
        return f"CONCAT({', '.join(parts)})" if self.syntax.concat else " || ".join(parts)

    def joined(self, parts: list[str]) -> str:
        if self.syntax.concat:
            return f"CONCAT({', '.join(parts)})"
        return super().joined(parts)


def _seen(recorded: Recorded, event: str) -> tuple[str, str]:
    """SQL for the entry's `seen_before` and `seen_after`: NULL when the table records no visibility,
    '' for the side a create or a delete has no row on."""
    old, new = recorded.seen_old, recorded.seen_new
    if old is None or new is None:
        return "NULL", "NULL"
    return ("''" if event == "INSERT" else old), ("''" if event == "DELETE" else new)


# PostgreSQL refuses two CREATE OR REPLACE FUNCTION of one function at once ("tuple concurrently
# updated"), as instances starting together would send; a session lock lets them take turns.
_PG_FUNCTION_LOCK = 0x7062636867667563


class ConstraintTriggers(ChangeTriggers):
    """PostgreSQL: one constraint trigger `<base>` per table, deferred to the commit, calling
    `pb_changes_record()`; it names no column, so dropping a column leaves it alone."""

    catalog_query = (
        "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace"
    )
    version_query = (
        f"SELECT (SELECT version FROM pb_state WHERE id = {HEAD_ID}) AS head, "
        "(SELECT string_agg(t.oid::text, ',' ORDER BY t.oid) FROM pg_trigger t "
        "WHERE t.tgrelid = to_regclass(quote_ident(:table)) "
        "AND left(t.tgname, 6) = :prefix AND t.tgenabled IN ('O', 'A')) AS trigger_id"
    )

    def names(self, table: str, recorded: Recorded, rules: str) -> list[str]:
        # A trigger that numbers at commit and records unchanged columns is named apart from an older
        # release's, so an upgrade replaces it (and the function it calls).
        return [trigger_base(table, recorded.key, rules + AT_COMMIT + CHANGED)]

    async def prepare(self) -> None:
        # A session lock holds only on the connection that took it: the lock, the CREATE and the unlock
        # all go through one connection (from a pool, each statement could take another and lock nothing).
        async with self.database.connection() as connection:
            await connection.execute(f"SELECT pg_advisory_lock({_PG_FUNCTION_LOCK})")
            try:
                await connection.execute(_PG_FUNCTION)
            finally:
                await connection.execute(f"SELECT pg_advisory_unlock({_PG_FUNCTION_LOCK})")

    def create(self, name: str, table: str, recorded: Recorded) -> str:
        arguments = [_literal(recorded.key)]
        if recorded.seen_argument is not None:
            arguments.append(_literal(recorded.seen_argument))
        # Deferred to the commit: it runs, with OLD and NEW as they were at the write, when the
        # transaction commits, so the head stays locked only from there to the end of the commit
        # rather than from the write on (docs/changes.md, "What is recorded").
        return (
            f"CREATE CONSTRAINT TRIGGER {self.quote(name)} AFTER INSERT OR UPDATE OR DELETE "
            f"ON {self.quote(table)} DEFERRABLE INITIALLY DEFERRED "
            f"FOR EACH ROW EXECUTE FUNCTION pb_changes_record({', '.join(arguments)})"
        )

    def drop(self, name: str, table: str) -> str:
        return f"DROP TRIGGER IF EXISTS {self.quote(name)} ON {self.quote(table)}"

    async def _version_row(self, raw: Any, table: str) -> Any:
        assert self.version_query is not None
        return await raw.fetchrow(self._driver_version_query, table, PREFIX)

    _driver_version_query = version_query.replace(":table", "$1").replace(":prefix", "$2")

    async def drop_naming_columns(self, table: str) -> None:
        """Its trigger names no column: nothing to drop."""


def sqlite_triggers(database: Database) -> ChangeTriggers:
    catalog = "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"
    return RowTriggers(database, sqlite.dialect(paramstyle="named"), SQLITE_ROWS, catalog)


def mariadb_triggers(database: Database) -> ChangeTriggers:
    # The schema is named by EVENT_OBJECT_SCHEMA, a column MariaDB looks tables up by: named by
    # TRIGGER_SCHEMA (always the same value), it opened the table of that name in every database on the
    # server, one by one, and a DDL statement in any of them made the read skip it with a warning.
    catalog = (
        "SELECT trigger_name, event_object_table FROM information_schema.triggers "
        "WHERE event_object_schema = DATABASE()"
    )
    triggers = RowTriggers(database, mysql.dialect(paramstyle="named"), MARIADB_ROWS, catalog)
    triggers.version_query = (
        f"SELECT (SELECT version FROM pb_state WHERE id = {HEAD_ID}) AS head, "
        "(SELECT CASE WHEN COUNT(*) = 3 THEN GROUP_CONCAT(CREATED ORDER BY TRIGGER_NAME) END "
        "FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = DATABASE() "
        "AND EVENT_OBJECT_TABLE = :table AND LEFT(TRIGGER_NAME, 6) = :prefix) AS trigger_id"
    )
    return triggers


def postgresql_triggers(database: Database) -> ChangeTriggers:
    return ConstraintTriggers(database, postgresql.dialect(paramstyle="named"))


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
