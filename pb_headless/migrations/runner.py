"""The steps themselves: Alembic on one locked connection (engine.run_locked), a transaction per step.

A new database gets this version's tables at once and is stamped at the latest revision (Alembic's
advice for new databases; tests/migrations checks that the revisions build exactly the same schema). A
database 0.1.0 made (its tables, no version table) is stamped 0001 first. Every other database moves
one revision at a time, so a failing step leaves the tables at the revision before it.
"""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from pb_headless.database import internals
from pb_headless.database.backends import Backend, backend_class
from pb_headless.migrations.errors import MigrationError

VERSION_TABLE = "pb_alembic_version"
FIRST = "0001"
# Every database 0.1.0's `install` made has this table; a database without the version table but
# with it is taken to be at FIRST.
LEGACY_TABLE = "pb_api_tokens"


@dataclass(frozen=True)
class Step:
    revision: str
    title: str


@dataclass
class Outcome:
    """What one migration did: the version before and after, and the steps it ran."""

    before: str | None
    after: str | None
    applied: list[Step] = field(default_factory=list)
    created: bool = False  # a new database, given the latest tables at once
    stamped: bool = False  # a 0.1.0 database, recognised and stamped FIRST


@functools.cache
def scripts() -> ScriptDirectory:
    return ScriptDirectory(str(Path(__file__).parent))


def head() -> str:
    latest = scripts().get_current_head()
    assert latest is not None, "pb_headless/migrations/versions holds no revision"
    return latest


def is_known(revision: str) -> bool:
    return revision in {script.revision for script in scripts().walk_revisions()}


def steps_between(current: str | None, target: str) -> list[Step]:
    """The steps from `current` (None: nothing) up to `target`, oldest first."""
    revisions = scripts().iterate_revisions(target, current or "base")
    return [Step(script.revision, _title(script.doc)) for script in reversed(list(revisions))]


def upgrade(connection: Connection, target: str, metadata: sa.MetaData | None = None) -> Outcome:
    """Bring the tables to `target`; runs under the migration lock, so it reads the version anew. Given
    the latest tables' `metadata`, a new database gets them at once instead of step by step."""
    current = _context(connection).get_current_revision()
    outcome = Outcome(before=current, after=current)
    new = current is None and not sa.inspect(connection).has_table(LEGACY_TABLE)
    if new and metadata is not None and target == head():
        with _step(connection):
            metadata.create_all(connection)
            _context(connection).stamp(scripts(), target)
        outcome.after, outcome.created = target, True
        return outcome
    if current is None and sa.inspect(connection).has_table(LEGACY_TABLE):
        with _step(connection):
            _context(connection).stamp(scripts(), FIRST)
        outcome.after = current = FIRST
        outcome.stamped = True
    for step in steps_between(current, target):
        try:
            with _step(connection):
                _run(_context(connection, _upgrade_to(step.revision)))
        except Exception as error:
            raise MigrationError(
                f"migration step {step.revision} ({step.title}) failed: {type(error).__name__}: "
                f"{_first_line(error)}; the library's tables stay at {outcome.after or 'nothing'}"
            ) from error
        outcome.after = step.revision
        outcome.applied.append(step)
    return outcome


def offline_sql(backend: Backend, current: str | None, legacy: bool, target: str) -> str:
    """The SQL `upgrade` would run from `current` on `backend`'s database, for a DBA to read or
    apply by hand."""
    buffer = io.StringIO()

    def emit(work: Callable[[Any, Any], Iterable[Any]], start: str | None) -> None:
        options = {"as_sql": True, "output_buffer": buffer, "starting_rev": start, "literal_binds": True,
                   "transaction_per_migration": True}  # fmt: skip
        _run(_context(None, work, dialect=backend.name, **options))

    if current is None and legacy:
        emit(lambda heads, _: internals.alembic_stamp_revisions(scripts(), FIRST, heads), None)
        current = FIRST
    emit(_upgrade_to(target), current)
    return buffer.getvalue()


def _upgrade_to(target: str) -> Callable[[Any, Any], Iterable[Any]]:
    # Alembic hands the current heads (a tuple) where its signature says str; its own commands do too.
    return lambda heads, _: internals.alembic_upgrade_revisions(scripts(), target, heads)


def _context(
    connection: Connection | None,
    work: Callable[..., Iterable[Any]] | None = None,
    dialect: str | None = None,
    **options: Any,
) -> MigrationContext:
    opts = {"version_table": VERSION_TABLE, "fn": work, **options}
    return MigrationContext.configure(connection, dialect_name=dialect, opts=opts)


def _run(context: MigrationContext) -> None:
    with Operations.context(context):
        context.run_migrations()


@contextlib.contextmanager
def _step(connection: Connection) -> Iterator[None]:
    """One step's transaction: a savepoint of SQLite's locked outer transaction, else a transaction
    of its own (MariaDB commits DDL at once; its steps are written to run again)."""
    if _backend(connection).migration_steps_in_savepoints:
        with connection.begin_nested():
            yield
        return
    if connection.in_transaction():  # the reads before the step began one
        connection.commit()
    with connection.begin():
        yield


def _backend(connection: Connection) -> type[Backend]:
    found = backend_class(connection.dialect.name)
    if found is None:
        raise MigrationError(f"pb_headless cannot migrate a {connection.dialect.name} database")
    return found


def _title(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if doc and doc.strip() else "no description"


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else "no message"
