"""`POST /batch`: creates, updates and deletes across objects in one transaction, all written or
none (docs/writes.md, "Atomic batches").

Each operation goes through the steps of its own request (api/writes.py: rules, `unique`, the row
lock, `If-Match`, the acting user) on the batch's connection, inside one write transaction that moves
the data version once. Before the first operation, the rows named by their ids and the `unique`
fields' locks are taken in one fixed order, so two batches touching the same rows wait for each
other instead of each holding what the other needs. A deadlock the database still reports (a
foreign key's shared lock met by another writer) is retried once from the start, then answered 503.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api.batch_inserts import insert_group, next_group, written_result
from pb_headless.api.batch_operations import (
    BatchOperation,
    failed_at,
    read_operations,
    resolved,
)
from pb_headless.api.context import RequestContext
from pb_headless.api.preconditions import check_tag
from pb_headless.api.reads import object_answer
from pb_headless.api.records import record_key
from pb_headless.api.uniqueness import take_unique_turns, unique_locks
from pb_headless.api.writes import (
    LOCK_TIMEOUT,
    create_row,
    create_values,
    delete_row,
    json_body,
    lock_served_row,
    update_row,
    update_values,
)
from pb_headless.database.database_errors import is_deadlock
from pb_headless.database.transactions import write_transaction
from pb_headless.errors import ApiError, NotFound, ServiceUnavailable
from pb_headless.http.conditional import OBJECT_VARY
from pb_headless.http.responses import OBJECT_CACHING, json_response
from pb_headless.idempotency.requests import Claim, once
from pb_headless.operations import Operation
from pb_headless.registry import ObjectSpec

RETRIES = 1  # a batch chosen as a deadlock's victim runs once more before the 503
DEADLOCKED = (
    "The batch met a concurrent write and was stopped; nothing was stored. Send it again "
    "(with the same Idempotency-Key, if it had one)."
)
Result = dict[str, Any]


async def batch_endpoint(context: RequestContext, request: Request) -> Response:
    """200 with one result per operation; under an `Idempotency-Key`, the answer is kept in the
    batch's own transaction."""

    async def run(claim: Claim | None) -> Response:
        operations = read_operations(context, json_body(request.headers, context))
        for attempt in range(RETRIES + 1):
            try:
                return await _written(context, operations, claim)
            except Exception as error:
                if not is_deadlock(error):
                    raise
                if attempt == RETRIES:
                    raise ServiceUnavailable(DEADLOCKED) from error
        raise AssertionError("unreachable")

    return await once(
        context.database, request, context.principal.token.token_hash, context.body.content, run
    )


async def _written(
    context: RequestContext, operations: list[BatchOperation], claim: Claim | None
) -> Response:
    database = context.database
    fields = _unique_fields(operations)
    async with unique_locks(database, fields, LOCK_TIMEOUT), write_transaction(database, context.unit):
        await take_unique_turns(database, fields)
        await _lock_named_rows(context, operations)
        results = await _applied(context, operations)
        response = json_response({"data": results}, headers={"Vary": OBJECT_VARY}, cache=OBJECT_CACHING)
        if claim is not None:
            await claim.keep(response)
    return response


def _unique_fields(operations: Iterable[BatchOperation]) -> list[tuple[ObjectSpec, str]]:
    return [
        (op.spec, name)
        for op in operations
        if op.data is not None
        for name in op.spec.validator.unique_fields
        if name in op.data
    ]


async def _lock_named_rows(context: RequestContext, operations: list[BatchOperation]) -> None:
    """Lock every row an operation names by its id, table by table and key by key in one order
    (SQLite's BEGIN IMMEDIATE already holds the whole database)."""
    if context.dialect == "sqlite":
        return
    named: dict[str, tuple[ObjectSpec, set[Any]]] = {}
    for op in operations:
        key = _key(op.spec, op.record_id)
        if key is not None:
            named.setdefault(op.spec.table.name, (op.spec, set()))[1].add(key)
    for table in sorted(named):
        spec, keys = named[table]
        column = spec.pk.column
        await context.database.fetch_all(
            sa.select(column).where(column.in_(sorted(keys))).order_by(column).with_for_update()
        )


async def _applied(context: RequestContext, operations: list[BatchOperation]) -> list[Result]:
    """Every operation in order; the first that fails is answered with its index."""
    keys: dict[str, Any] = {}  # label → the key its operation wrote
    results: list[Result] = []
    position = 0
    while position < len(operations):
        group = next_group(context, operations, position)
        try:
            if len(group) > 1:
                written = await insert_group(context, group, keys)
            else:
                written = [await _apply(context, group[0], keys)]
        except ApiError as error:
            if "operation" not in error.extra:  # a group's insert names the operation itself
                failed_at(error, group[0].index)
            raise
        for op, (result, key) in zip(group, written, strict=True):
            if op.label is not None:
                keys[op.label] = key
            results.append(result)
        position += len(group)
    return results


async def _apply(context: RequestContext, op: BatchOperation, keys: dict[str, Any]) -> tuple[Result, Any]:
    spec = op.spec
    if op.operation is Operation.CREATE:
        values, sent = create_values(context, spec, resolved(op.data, keys))
        key = await create_row(context, spec, values, sent)
        return await written_result(context, spec, key, 201), key
    record_id = resolved(op.record_id, keys)
    key = _key(spec, record_id)
    if key is None:
        raise object_answer(NotFound(f"There is no record '{record_id}' in '{spec.name}'."))
    await lock_served_row(context, spec, key, str(record_id))
    if op.operation is Operation.UPDATE:
        values, sent = update_values(spec, resolved(op.data, keys))
        await check_tag(context, op.if_match, spec, key)
        await update_row(context, spec, key, values, sent)
        return await written_result(context, spec, key, 200), key
    await check_tag(context, op.if_match, spec, key)
    await delete_row(context, spec, key)
    return {"status": 204, "data": None, "etag": None}, key


def _key(spec: ObjectSpec, record_id: Any) -> Any | None:
    """The key an id addresses, as in a path: only its canonical form (None: no such record)."""
    if isinstance(record_id, bool) or not isinstance(record_id, (int, str)):
        return None
    return record_key(spec, str(record_id))
