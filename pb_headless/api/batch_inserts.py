"""Consecutive creates of one object in a batch, written as one multi-row INSERT (docs/writes.md,
"Atomic batches").

Where the database returns the keys of a multi-row INSERT (PostgreSQL, and SQLite from 3.35, with
RETURNING) and the key is the table's auto-increment column, a run of creates of one object is
checked by its rules one by one, checked for `unique` with one query per field for the whole run,
and inserted with one statement; the keys come back ascending in the order of the rows. MariaDB's
creates are written one by one (the ids of one multi-row INSERT are consecutive only under one of
its lock modes). The outcome is the one the creates would have one by one: the first failing
operation is answered with its index, and a value the database refuses is traced to its row by
writing the run again row by row (after a savepoint on PostgreSQL, whose failed statement ends the
transaction).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from pb_headless.api.batch_operations import BatchOperation, Ref, failed_at, resolved
from pb_headless.api.context import RequestContext
from pb_headless.api.uniqueness import take_unique_turns
from pb_headless.api.writes import create_row, create_values, read_back, visible
from pb_headless.database.oneoff import fetch_rows
from pb_headless.errors import ApiError, ValidationFailed
from pb_headless.http.conditional import record_tag
from pb_headless.operations import Operation
from pb_headless.query import parse_query, plan_show
from pb_headless.query.compiler import compile_show_many
from pb_headless.registry import ObjectSpec

_SAVEPOINT = "pb_batch_rows"
_NO_PARAMETERS = parse_query(())


def next_group(
    context: RequestContext, operations: Sequence[BatchOperation], start: int
) -> list[BatchOperation]:
    """The operations from `start` written together: a run of creates of one object none of which
    refers to a label inside the run, or the one operation at `start`."""
    first = operations[start]
    group = [first]
    if first.operation is not Operation.CREATE or not groups_rows(context, first.spec):
        return group
    labels = {first.label} - {None}
    for op in operations[start + 1 :]:
        if op.operation is not Operation.CREATE or op.spec is not first.spec or _refers(op.data, labels):
            break
        group.append(op)
        labels |= {op.label} - {None}
    return group


def groups_rows(context: RequestContext, spec: ObjectSpec) -> bool:
    """Whether creates of `spec` go in one statement on this database."""
    return context.backend.returns_inserted_keys and spec.table.autoincrement_column is spec.pk.column


async def insert_group(
    context: RequestContext, group: Sequence[BatchOperation], keys: dict[str, Any]
) -> list[tuple[dict[str, Any], Any]]:
    """Each create's (result, key), in order; the first failing create raises with its index."""
    spec = group[0].spec
    rows: list[tuple[dict[str, Any], frozenset[str]]] = []
    failure: ApiError | None = None
    for op in group:
        try:
            rows.append(create_values(context, spec, resolved(op.data, keys)))
        except ApiError as error:  # the creates before it still run first: their failure would come first
            failure = failed_at(error, op.index)
            break
    if rows:
        _check_unique_run(group, rows, await _taken(context, spec, rows))
        new_keys = await _insert_rows(context, group, rows)
    if failure is not None:
        raise failure
    return await _created_results(context, spec, new_keys)


def _refers(value: Any, labels: set[str | None]) -> bool:
    if isinstance(value, Ref):
        return value.label in labels
    if isinstance(value, dict):
        return any(_refers(inner, labels) for inner in value.values())
    if isinstance(value, list):
        return any(_refers(inner, labels) for inner in value)
    return False


async def _taken(
    context: RequestContext, spec: ObjectSpec, rows: Sequence[tuple[dict[str, Any], frozenset[str]]]
) -> dict[str, set[Any]]:
    """For each `unique` field the run sets, the values of it some row already holds: one query a field."""
    wanted: dict[str, set[Any]] = {}
    for values, _ in rows:
        for name in spec.validator.unique_fields:
            if values.get(name) is not None:
                wanted.setdefault(name, set()).add(values[name])
    await take_unique_turns(context.database, [(spec, name) for name in wanted])
    taken: dict[str, set[Any]] = {}
    for name, candidates in wanted.items():
        column = spec.table.c[name]
        found = await context.database.fetch_all(sa.select(column).where(column.in_(list(candidates))))
        taken[name] = {row[0] for row in found}
    return taken


def _check_unique_run(
    group: Sequence[BatchOperation],
    rows: Sequence[tuple[dict[str, Any], frozenset[str]]],
    taken: dict[str, set[Any]],
) -> None:
    """422 for the first create whose `unique` value a row holds, or an earlier create of the run."""
    spec = group[0].spec
    for op, (values, _) in zip(group, rows, strict=False):
        clashes = [
            name for name, held in taken.items() if values.get(name) is not None and values[name] in held
        ]
        if clashes:
            raise failed_at(
                ValidationFailed({name: [spec.validator.unique_message(name)] for name in clashes}), op.index
            )
        for name, held in taken.items():
            if values.get(name) is not None:
                held.add(values[name])


def _holds(held: set[Any], value: Any) -> bool:
    return value is not None and value in held


async def _insert_rows(
    context: RequestContext,
    group: Sequence[BatchOperation],
    rows: Sequence[tuple[dict[str, Any], frozenset[str]]],
) -> list[Any]:
    """The keys of the rows, inserted by as few statements as their columns allow."""
    spec, keys = group[0].spec, []
    start = 0
    while start < len(rows):
        columns = set(rows[start][0])
        end = start + 1
        while end < len(rows) and set(rows[end][0]) == columns:
            end += 1
        keys += await _insert_run(context, group[start:end], rows[start:end], spec)
        start = end
    return keys


async def _insert_run(
    context: RequestContext,
    group: Sequence[BatchOperation],
    rows: Sequence[tuple[dict[str, Any], frozenset[str]]],
    spec: ObjectSpec,
) -> list[Any]:
    if len(rows) == 1 or spec.pk.name in rows[0][0]:
        return await _one_by_one(context, group, rows)
    statement = spec.table.insert().values([values for values, _ in rows]).returning(spec.pk.column)
    database, savepoint = context.database, context.backend.error_spoils_transaction
    if savepoint:
        await database.execute(sa.text(f"SAVEPOINT {_SAVEPOINT}"))
    try:
        found = await database.fetch_all(statement)
    except Exception:  # a value the database refused: find its row as the creates one by one would
        if savepoint:
            await database.execute(sa.text(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}"))
        await _one_by_one(context, group, rows)
        raise  # the one-by-one run raised for the refused row; if not, the refusal stands
    if savepoint:
        await database.execute(sa.text(f"RELEASE SAVEPOINT {_SAVEPOINT}"))
    return sorted(row[0] for row in found)  # auto-increment keys, given in the order of the rows


async def _one_by_one(
    context: RequestContext,
    group: Sequence[BatchOperation],
    rows: Sequence[tuple[dict[str, Any], frozenset[str]]],
) -> list[Any]:
    keys = []
    for op, (values, sent) in zip(group, rows, strict=True):
        try:
            keys.append(await create_row(context, op.spec, values, sent))
        except ApiError as error:
            raise failed_at(error, op.index) from None
    return keys


async def _created_results(
    context: RequestContext, spec: ObjectSpec, keys: Sequence[Any]
) -> list[tuple[dict[str, Any], Any]]:
    """Each new record as its own create answers it, read in one statement; a row the object does not
    serve (created unpublished) is read on its own, as the single create reads it."""
    plan = plan_show(spec, _NO_PARAMETERS)
    statement = compile_show_many(spec, plan, keys)
    fetch = (
        context.database.fetch_all if spec.query is None else functools.partial(fetch_rows, context.database)
    )
    rows = await fetch(statement)
    served = dict(zip((row[spec.pk.name] for row in rows), plan.render(rows), strict=True))
    readable = context.principal.has_scope(spec.read_scope)
    results = []
    for key in keys:
        record = served.get(key)
        if record is None:
            results.append((await written_result(context, spec, key, 201), key))
            continue
        tag = record_tag(record) if readable else None
        results.append(({"status": 201, "data": visible(context, spec, record), "etag": tag}, key))
    return results


async def written_result(context: RequestContext, spec: ObjectSpec, key: Any, status: int) -> dict[str, Any]:
    """An operation's result as its own request answers: the record (only its key for a token that
    may not read the object) and its tag (none for a record the object does not serve)."""
    record, addressable = await read_back(context, spec, key)
    readable = context.principal.has_scope(spec.read_scope)
    tag = record_tag(record) if addressable and readable else None
    return {"status": status, "data": visible(context, spec, record), "etag": tag}
