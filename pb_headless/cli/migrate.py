"""`pb-headless migrate` and `pb-headless migrate status`: the library's tables across releases."""

from __future__ import annotations

import argparse

from databases import Database

from pb_headless.cli.output import CommandError
from pb_headless.migrations.migrate import planned_steps, read_schema, upgrade, upgrade_sql
from pb_headless.migrations.runner import Step
from pb_headless.tables import install, metadata


async def migrate(database: Database, args: argparse.Namespace) -> str:
    if args.sql:
        return await _sql(database, args.to)
    if args.dry_run:
        return await _dry_run(database, args.to)
    schema = await read_schema(database)
    outcome = await upgrade(database, args.to, metadata=metadata)
    if outcome.after == schema.latest:
        await install(database)  # the default rows this release expects, as `install` adds them
    if outcome.created:
        return f"created the library's tables at version {outcome.after}"
    if not outcome.applied:
        return f"the library's tables are at version {outcome.after}; nothing to do"
    lines = [f"migrated the library's tables from {schema.describe()} to {outcome.after}:"]
    return "\n".join(lines + [_step_line(step, "applied ") for step in outcome.applied])


async def status(database: Database, args: argparse.Namespace) -> str:
    if args.to or args.dry_run or args.sql:
        raise CommandError("'migrate status' changes nothing and takes no --to, --dry-run or --sql")
    schema = await read_schema(database)
    current = schema.describe()
    if not schema.known:
        current += " (unknown to this release: a newer release of pb_headless migrated the tables)"
    lines = [f"current: {current}", f"latest:  {schema.latest}"]
    if schema.current is None and not schema.legacy:
        lines.append("pending: everything; 'pb-headless migrate' creates the tables")
    elif schema.known:
        pending = schema.pending
        lines.append(f"pending: {len(pending)} step{'' if len(pending) == 1 else 's'}")
        lines += [_step_line(step) for step in pending]
    return "\n".join(lines)


async def _sql(database: Database, target: str | None) -> str:
    """The steps' SQL; when there is none, an SQL comment saying so (still valid where it is piped)."""
    schema, steps = await planned_steps(database, target)
    if not steps and (schema.current is not None or schema.legacy):
        return f"-- the library's tables are at version {schema.describe()}; nothing to do, no SQL to run"
    return (await upgrade_sql(database, target)).rstrip()


async def _dry_run(database: Database, target: str | None) -> str:
    schema, steps = await planned_steps(database, target)
    if schema.current is None and not schema.legacy:
        return f"would create the library's tables at version {target or schema.latest}"
    if not steps:
        return f"the library's tables are at version {schema.describe()}; nothing to do"
    lines = [f"the library's tables are at version {schema.describe()}; would apply:"]
    return "\n".join(lines + [_step_line(step) for step in steps])


def _step_line(step: Step, verb: str = "") -> str:
    return f"  {verb}{step.revision}  {step.title}"
