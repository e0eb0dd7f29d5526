"""The generic write endpoints: create (201), update (200) and delete (204) — docs/writes.md.

The body was read before any connection was taken; here it is checked completely before anything is
written. The row an update or delete addresses is checked and changed in one transaction, with the
object's narrowing (published rows, the declaration's `query`) in the statement's own WHERE, so a row
unpublished in between is never written. Any failure leaves the table as it was.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Collection
from typing import Any

import orjson
import sqlalchemy as sa
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api import write_statements
from pb_headless.api.context import RequestContext
from pb_headless.api.preconditions import check_if_match, tag_headers
from pb_headless.api.reads import object_answer
from pb_headless.api.records import canonical_id, record_address, record_key
from pb_headless.api.uniqueness import check_unique, fields_to_check, named_locks
from pb_headless.database.database_errors import is_data_error, is_duplicate_key
from pb_headless.database.transactions import write_transaction
from pb_headless.errors import BadRequest, NotFound, UnsupportedMediaType, ValidationFailed
from pb_headless.http.conditional import OBJECT_VARY
from pb_headless.http.responses import OBJECT_CACHING, empty_response, json_response
from pb_headless.idempotency.requests import Claim
from pb_headless.query import fetch_one, render_record
from pb_headless.registry import ObjectSpec

_JSON_MEDIA = re.compile(r"application/(?:[\w.+-]+\+)?json", re.IGNORECASE)
LOCK_TIMEOUT = 5.0  # seconds a MariaDB writer waits for a unique value's named lock


async def create_record(
    context: RequestContext, request: Request, spec: ObjectSpec, _: str, claim: Claim | None = None
) -> Response:
    """201 with the record; under an `Idempotency-Key`, the answer is kept in the insert's own
    transaction (`claim`), so it exists if and only if the row does."""
    values, sent = create_values(context, spec, json_body(request.headers, context))
    database = context.database
    unique = fields_to_check(spec, values)
    async with named_locks(database, spec, unique, LOCK_TIMEOUT), write_transaction(database, context.unit):
        key = await create_row(context, spec, values, sent)
        record, addressable = await read_back(context, spec, key)
        headers = {"Vary": OBJECT_VARY}  # the answer is the token's own, as a read's is
        # A row the object does not serve (created unpublished, or outside `query`) has no address.
        if addressable:
            headers["Location"] = record_address(context.api_root, spec, key)
            headers.update(tag_headers(context, spec, record))
        body = {"data": visible(context, spec, record)}
        response = json_response(body, status_code=201, headers=headers, cache=OBJECT_CACHING)
        if claim is not None:
            await claim.keep(response)
    return response


async def update_record(
    context: RequestContext, request: Request, spec: ObjectSpec, record_id: str
) -> Response:
    key = await _served_key(context, spec, record_id)
    values, sent = update_values(spec, json_body(request.headers, context))
    database = context.database
    unique = fields_to_check(spec, values)
    async with named_locks(database, spec, unique, LOCK_TIMEOUT), write_transaction(database, context.unit):
        await lock_served_row(context, spec, key, record_id)
        await check_if_match(context, request.headers, spec, key)
        await update_row(context, spec, key, values, sent)
        record, addressable = await read_back(context, spec, key)
    headers = {"Vary": OBJECT_VARY, **(tag_headers(context, spec, record) if addressable else {})}
    return json_response({"data": visible(context, spec, record)}, headers=headers, cache=OBJECT_CACHING)


async def delete_record(
    context: RequestContext, request: Request, spec: ObjectSpec, record_id: str
) -> Response:
    key = await _served_key(context, spec, record_id)
    async with write_transaction(context.database, context.unit):
        await lock_served_row(context, spec, key, record_id)
        await check_if_match(context, request.headers, spec, key)
        await delete_row(context, spec, key)
    return empty_response(204)


# -- the steps of a write, shared by the single endpoints and batches (api/batch.py) -------------


def create_values(
    context: RequestContext, spec: ObjectSpec, body: dict[str, Any]
) -> tuple[dict[str, Any], frozenset[str]]:
    """A create body checked (422) and completed: published, the acting user, the model's defaults;
    with the fields the client sent."""
    values = _checked(spec, body, partial=False)
    sent = frozenset(values)
    if spec.published is not None and spec.published.name not in values:
        values[spec.published.name] = True  # rows created through the API are published
    _stamp(spec, context, values, ("created_by", "updated_by"))
    return spec.defaults.for_insert(values), sent  # the model's own `default=`, as SQLAlchemy would


def update_values(spec: ObjectSpec, body: dict[str, Any]) -> tuple[dict[str, Any], frozenset[str]]:
    """An update body checked (422): only the fields present; with the fields the client sent."""
    values = _checked(spec, body, partial=True)
    return values, frozenset(values)


async def create_row(
    context: RequestContext, spec: ObjectSpec, values: dict[str, Any], sent: frozenset[str]
) -> Any:
    """Inside the write transaction: `unique` (422), then the insert; the new row's key."""
    await check_unique(context.database, spec, values, exclude=None)
    return await _insert(context, spec, values, sent)


async def update_row(
    context: RequestContext, spec: ObjectSpec, key: Any, values: dict[str, Any], sent: frozenset[str]
) -> None:
    """Inside the write transaction, the row locked and served: `unique` (422), then the update."""
    if not values:
        return
    _stamp(spec, context, values, ("updated_by",))
    values = spec.defaults.for_update(values)  # the model's own `onupdate=`
    await check_unique(context.database, spec, values, exclude=key)
    await _write(spec, write_statements.update(context, spec, key, values), values, sent)


async def delete_row(context: RequestContext, spec: ObjectSpec, key: Any) -> None:
    """Inside the write transaction, the row locked and served: the delete."""
    await _write(spec, write_statements.delete(context, spec, key), {}, (), refused=spec.pk.name)


def json_body(headers: Headers, context: RequestContext) -> dict[str, Any]:
    """The body as a JSON object: 415 for another media type, 413 over 1 MiB, 400 when malformed."""
    media_type = headers.get("content-type", "").split(";")[0].strip()
    if not _JSON_MEDIA.fullmatch(media_type):
        raise UnsupportedMediaType()
    try:
        body = orjson.loads(context.body.bytes())
    except orjson.JSONDecodeError:
        raise BadRequest("The body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object of field values.")
    return body


def _checked(spec: ObjectSpec, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
    result = spec.validator.validate(body, partial=partial)
    if result.errors:
        raise object_answer(ValidationFailed(result.errors))
    return dict(result.values)


def visible(context: RequestContext, spec: ObjectSpec, record: dict[str, Any]) -> dict[str, Any]:
    """A token that may write but not read the object learns only the key of what it wrote."""
    if context.principal.has_scope(spec.read_scope):
        return record
    return {spec.pk.name: record[spec.pk.name]}


def _stamp(
    spec: ObjectSpec, context: RequestContext, values: dict[str, Any], columns: tuple[str, ...]
) -> None:
    """Record the token's acting user in `created_by` / `updated_by` where the table has them."""
    user_id = context.principal.token.user_id
    if user_id is None:
        return
    for name in columns:
        column = spec.audit_columns.get(name)
        if column is not None and name not in values:
            is_number = isinstance(column.type, sa.Integer) and user_id.isdigit()
            values[name] = int(user_id) if is_number else user_id


async def _served_key(context: RequestContext, spec: ObjectSpec, record_id: str) -> Any:
    """The key of a record the object serves, or 404 (before the body is looked at)."""
    key = record_key(spec, record_id)
    if key is None or not await write_statements.is_served(context, spec, key):
        raise object_answer(NotFound(f"There is no record '{record_id}' in '{spec.name}'."))
    return key


async def lock_served_row(context: RequestContext, spec: ObjectSpec, key: Any, record_id: str) -> None:
    """Inside the transaction: lock the row, then make sure the object still serves it."""
    if context.dialect != "sqlite":  # SQLite's BEGIN IMMEDIATE already holds the write lock
        await write_statements.lock_row(context, spec, key)
    if not await write_statements.is_served(context, spec, key):
        raise object_answer(NotFound(f"There is no record '{record_id}' in '{spec.name}'."))


async def _insert(
    context: RequestContext, spec: ObjectSpec, values: dict[str, Any], sent: frozenset[str]
) -> Any:
    if spec.pk.name in values:
        await _write(spec, write_statements.insert(context, spec, values, returning=False), values, sent)
        return values[spec.pk.name]
    returning = context.dialect == "postgresql"  # elsewhere the driver's lastrowid
    return await _write(spec, write_statements.insert(context, spec, values, returning), values, sent)


async def _write(
    spec: ObjectSpec,
    write: Awaitable[Any],
    values: dict[str, Any],
    sent: Collection[str],
    refused: str | None = None,
) -> Any:
    """Run a write; what the database refuses because of the client's values is a 422, not a 500.
    A refused delete names the record (`refused`): other rows still reference it. `sent` are the
    fields the client sent: a refusal naming another column is the server's fault (a 500)."""
    try:
        return await write
    except Exception as error:
        if is_duplicate_key(error):
            unique = [name for name in fields_to_check(spec, values) if _names(str(error), name)]
            if unique:
                raise ValidationFailed(
                    {name: [spec.validator.unique_message(name)] for name in unique}
                ) from None
        if not is_data_error(error):
            raise
        if refused is not None:
            raise ValidationFailed({refused: ["The record is still referenced by other records."]}) from None
        conflict = _conflict(error, sent, spec.table)
        if conflict is None:
            raise
        raise conflict from None


BODY_KEY = "(body)"  # details key of a conflict of the body as a whole: no field can be named so


def _conflict(error: Exception, sent: Collection[str], table: sa.Table) -> ValidationFailed | None:
    """The 422 for a refusal caused by the client's values, or None when it is not theirs: the
    database names a column the client did not send (a NOT NULL column nothing filled, a default
    that breaks a constraint). A refusal naming no column (a multi-column unique or check
    constraint) is the body's as a whole."""
    text = " ".join(str(part) for part in (error, getattr(error, "detail", None)) if part)
    message = "The value conflicts with the database's constraints."
    named = [name for name in sent if _names(text, name)]
    if named:
        return ValidationFailed({name: [message] for name in named})
    others = [
        column.name for column in table.columns if column.name not in sent and _names(text, column.name)
    ]
    return None if others else ValidationFailed({BODY_KEY: [message]})


def _names(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


async def read_back(context: RequestContext, spec: ObjectSpec, key: Any) -> tuple[dict[str, Any], bool]:
    """The record as `show` renders it, and whether the object serves it; a row the object does not
    serve (the client just unpublished it) is rendered from the table."""
    plan = write_statements.plain_plan(spec)
    record, _ = await fetch_one(
        context.database, spec, plan, canonical_id(spec, key), context.dialect, context.caches
    )
    if record is not None:
        return record, True
    row = await context.database.fetch_one(
        sa.select(*(f.column for f in plan.fields)).where(spec.pk.column == key)
    )
    if row is None:
        raise NotFound(f"There is no record '{key}' in '{spec.name}'.")
    return render_record(row, plan.fields), False
