"""A freshly installed database for each test, without running the migrations for each test.

Installing is DDL — a dozen CREATE TABLEs through Alembic, about half a second on MariaDB and a fifth
on PostgreSQL — and nearly every test starts from it. So a test session installs once per kind of
database, remembers what that left (the library's tables, their columns, indexes and constraints,
and their rows), and before each later test brings the database back to exactly that:

- SQLite: the installed file, copied (a test's database is a file of its own, as before);
- PostgreSQL, MariaDB: every table that is not the library's dropped (the site's tables a test
  made), the library's tables emptied, the installer's rows put back and the key counters a test
  moved set back to 1.

Whenever the library's tables are not as installed — a migration test downgraded them, a test made
the database empty, another session's run dropped them — the database is emptied and installed
again, as every test did before.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from pb_headless.migrations.runner import VERSION_TABLE
from pb_headless.tables import metadata as library_metadata

LIBRARY_TABLES = frozenset({*library_metadata.tables, VERSION_TABLE})


@dataclass(frozen=True)
class Installed:
    """What a fresh install left in one kind of database."""

    schema: tuple  # the library's columns, indexes and constraints (schema_of)
    tables: tuple[sa.Table, ...]  # reflected, in dependency order
    rows: dict[str, list[dict]]  # table name → the rows the installer wrote


_installed: dict[str, Installed] = {}
_sqlite_template: Path | None = None


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


async def prepare(url: str, async_url: str, kind: str, *, installed: bool) -> bool:
    """Make the database empty (`installed` false) or as freshly installed; True when the caller must
    still run the installer, which it then follows with `remember`."""
    if kind == "sqlite":
        if installed and _sqlite_template is not None:
            shutil.copyfile(_sqlite_template, sqlite_path(url))
            return False
        return installed
    engine = create_async_engine(async_url, poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            known = _installed.get(kind) if installed else None
            restored = await connection.run_sync(_restore, known) if known else False
            if not restored:
                await connection.run_sync(_drop_every_table)
    finally:
        await engine.dispose()
    return installed and not restored


async def remember(url: str, async_url: str, kind: str) -> None:
    """Keep what the installer just left, for `prepare` to restore before the next tests."""
    global _sqlite_template
    if kind == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="pb_installed_"))
        template = folder / "installed.db"
        with sqlite3.connect(sqlite_path(url)) as source, sqlite3.connect(template) as copy:
            source.backup(copy)
        source.close()
        copy.close()
        _sqlite_template = template
        return
    engine = create_async_engine(async_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            _installed[kind] = await connection.run_sync(_snapshot)
    finally:
        await engine.dispose()


def forget() -> None:
    """At the session's end: the servers' databases are dropped, the SQLite template removed."""
    global _sqlite_template
    _installed.clear()
    if _sqlite_template is not None:
        shutil.rmtree(_sqlite_template.parent, ignore_errors=True)
        _sqlite_template = None


def _snapshot(connection: Connection) -> Installed:
    reflected = sa.MetaData()
    reflected.reflect(connection, only=sorted(LIBRARY_TABLES))
    tables = tuple(reflected.sorted_tables)
    rows = {table.name: [row._asdict() for row in connection.execute(sa.select(table))] for table in tables}
    return Installed(schema_of(connection), tables, rows)


def _restore(connection: Connection, known: Installed) -> bool:
    """Bring the library's tables back to `known` and drop every other table; False (nothing changed)
    when the library's tables are not as installed."""
    names = set(sa.inspect(connection).get_table_names())
    if not names >= LIBRARY_TABLES or schema_of(connection) != known.schema:
        return False
    preparer = connection.dialect.identifier_preparer
    others = ", ".join(preparer.quote(name) for name in sorted(names - LIBRARY_TABLES))
    if others and connection.dialect.name == "postgresql":
        connection.execute(sa.text(f"DROP TABLE {others} CASCADE"))  # with the views on them
    elif others:  # MariaDB: in any order, whatever their foreign keys
        connection.execute(sa.text("SET FOREIGN_KEY_CHECKS = 0"))
        connection.execute(sa.text(f"DROP TABLE {others}"))
        connection.execute(sa.text("SET FOREIGN_KEY_CHECKS = 1"))
    # DELETE, not TRUNCATE: TRUNCATE makes each table's files anew, a sync to disk each on commit.
    for table in reversed(known.tables):
        connection.execute(table.delete())
    for table in known.tables:
        if known.rows[table.name]:
            connection.execute(table.insert(), known.rows[table.name])
    _restart_counters(connection)
    return True


def _restart_counters(connection: Connection) -> None:
    """Key counters back at 1, as a fresh install has them: only those a test moved (a DDL on MariaDB)."""
    names = {"names": sorted(LIBRARY_TABLES)}
    if connection.dialect.name == "postgresql":
        moved = connection.execute(
            sa.text(
                "SELECT s.relname FROM pg_class s JOIN pg_depend d ON d.objid = s.oid"
                " JOIN pg_class t ON d.refobjid = t.oid JOIN pg_sequences q ON q.sequencename = s.relname"
                " WHERE s.relkind = 'S' AND t.relname IN :names AND q.last_value IS NOT NULL"
                " AND q.schemaname = current_schema()"
            ).bindparams(sa.bindparam("names", expanding=True)),
            names,
        )
        for (sequence,) in moved:
            connection.execute(sa.text("SELECT setval(:sequence, 1, false)"), {"sequence": sequence})
        return
    moved = connection.execute(
        sa.text(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
            " AND table_name IN :names AND auto_increment > 1"
        ).bindparams(sa.bindparam("names", expanding=True)),
        names,
    )
    quote = connection.dialect.identifier_preparer.quote
    for (table,) in moved:
        connection.execute(sa.text(f"ALTER TABLE {quote(table)} AUTO_INCREMENT = 1"))


def _drop_every_table(connection: Connection) -> None:
    metadata = sa.MetaData()
    metadata.reflect(connection)
    metadata.drop_all(connection)


def schema_of(connection: Connection) -> tuple:
    """The library's tables as the catalog describes them: columns, indexes, constraints."""
    names = sorted(LIBRARY_TABLES)
    if connection.dialect.name == "postgresql":
        schema, indexes = "current_schema()", "SELECT tablename, indexname, indexdef FROM pg_indexes"
        indexes += " WHERE schemaname = current_schema() AND tablename IN :names"
    else:
        schema = "DATABASE()"
        indexes = "SELECT table_name, index_name, column_name, seq_in_index, non_unique"
        indexes += " FROM information_schema.statistics"
        indexes += " WHERE table_schema = DATABASE() AND table_name IN :names"
    queries = [
        "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default,"
        " character_maximum_length FROM information_schema.columns"
        f" WHERE table_schema = {schema} AND table_name IN :names",
        indexes,
        "SELECT table_name, constraint_name, constraint_type FROM information_schema.table_constraints"
        f" WHERE table_schema = {schema} AND table_name IN :names",
    ]
    found = []
    for query in queries:
        statement = sa.text(query).bindparams(sa.bindparam("names", expanding=True))
        rows = connection.execute(statement, {"names": names})
        found.append(tuple(sorted(tuple(map(str, row)) for row in rows)))
    return tuple(found)
