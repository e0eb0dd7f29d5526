"""Bringing a host's database to this version's tables, and the cheap check of where it stands.

Reading the version goes through the host's `databases.Database` (two small queries), so `install` on
a database already at the latest version costs what it did before migrations; only a database that is
behind opens the migration's own connection (engine.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from databases import Database

from pb_headless.database.backends import backend_for
from pb_headless.migrations import engine, runner
from pb_headless.migrations.catalog import existing_tables
from pb_headless.migrations.errors import SchemaMismatch
from pb_headless.migrations.runner import LEGACY_TABLE, VERSION_TABLE, Outcome, Step

MIGRATE_COMMAND = "pb-headless migrate"


@dataclass(frozen=True)
class Schema:
    """Where a database's library tables stand."""

    current: str | None  # the revision in pb_alembic_version; None when there is none
    legacy: bool  # tables of 0.1.0 without a version table: taken to be at runner.FIRST
    latest: str

    @property
    def effective(self) -> str | None:
        return runner.FIRST if self.current is None and self.legacy else self.current

    @property
    def known(self) -> bool:
        return self.current is None or runner.is_known(self.current)

    @property
    def pending(self) -> list[Step]:
        return runner.steps_between(self.effective, self.latest) if self.known else []

    def describe(self) -> str:
        if self.current is None:
            legacy = f"{runner.FIRST} (0.1.0's tables, no version table yet)"
            return legacy if self.legacy else "not installed"
        return self.current


async def read_schema(database: Database) -> Schema:
    names = await existing_tables(database)
    current = None
    if VERSION_TABLE in names:
        rows = await database.fetch_all(sa.text(f"SELECT version_num FROM {VERSION_TABLE}"))
        current = ",".join(sorted(row[0] for row in rows)) or None
    return Schema(current, current is None and LEGACY_TABLE in names, runner.head())


async def upgrade(
    database: Database, target: str | None = None, *, metadata: sa.MetaData | None = None
) -> Outcome:
    """Bring the library's tables to `target` (default: the latest revision); nothing to do costs two
    reads. `metadata` (the latest tables, pb_headless.tables) lets a new database get them at once.
    Raises MigrationError naming the step that failed."""
    schema = await read_schema(database)
    target = _checked_target(schema, target)
    if schema.current == target:
        return Outcome(before=target, after=target)
    return await engine.run_locked(database, lambda connection: runner.upgrade(connection, target, metadata))


async def planned_steps(database: Database, target: str | None = None) -> tuple[Schema, list[Step]]:
    """Where the tables stand, and the steps `upgrade` would run to reach `target`; changes nothing."""
    schema = await read_schema(database)
    target = _checked_target(schema, target)
    return schema, [step for step in schema.pending if step.revision <= target]


async def upgrade_sql(database: Database, target: str | None = None) -> str:
    """The SQL that `upgrade` would run on this database, without running it."""
    schema = await read_schema(database)
    target = _checked_target(schema, target)
    engine.engine_url(database)  # refuses a database that cannot be migrated, saying why
    return runner.offline_sql(backend_for(database), schema.current, schema.legacy, target)


async def check(database: Database, *, migrate: bool = False) -> bool:
    """At start-up: refuse tables this code cannot serve, and older ones unless the host opted in
    (`migrate`), saying how to bring them up. True: they are older and the caller is to install."""
    schema = await read_schema(database)
    if not schema.known:
        raise SchemaMismatch(
            f"the library's tables are at version {schema.current}, which this release of pb_headless "
            f"does not know (its latest is {schema.latest}): a newer release migrated them; deploy that "
            "release again (docs/upgrading.md)"
        )
    if schema.current == schema.latest:
        return False
    if migrate:
        return True
    if schema.current is None and not schema.legacy:
        advice = (
            f"run '{MIGRATE_COMMAND}' (or call pb_headless.install) before starting the API, "
            "or start it with HeadlessAPI(..., migrate=True)"
        )
        raise SchemaMismatch(f"the library's tables are not installed in this database: {advice}")
    raise SchemaMismatch(
        f"the library's tables are at version {schema.describe()}, this release needs {schema.latest}: "
        f"run '{MIGRATE_COMMAND}' or start the API with HeadlessAPI(..., migrate=True) (docs/upgrading.md)"
    )


def _checked_target(schema: Schema, target: str | None) -> str:
    target = target or schema.latest
    if not runner.is_known(target):
        raise ValueError(f"no migration {target!r}: the revisions are {', '.join(_all_revisions())}")
    if not schema.known:
        raise SchemaMismatch(
            f"the library's tables are at version {schema.current}, which this release does not know; "
            "a newer release migrated them"
        )
    if schema.effective and target != schema.effective and target not in _later_than(schema.effective):
        raise ValueError(
            f"the library's tables are at {schema.effective}, past {target}: migrations only go forward"
        )
    return target


def _later_than(revision: str) -> set[str]:
    return {step.revision for step in runner.steps_between(revision, runner.head())}


def _all_revisions() -> list[str]:
    return [step.revision for step in runner.steps_between(None, runner.head())]
