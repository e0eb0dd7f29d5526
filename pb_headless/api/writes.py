"""The generic write endpoints: create (201), update (200) and delete (204), per CONTRACT §5.

A write reads and checks its body completely before it touches the database, runs in one
transaction, and answers with the record read back exactly as `show` would render it. Any failure
leaves the table as it was.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import orjson
import sqlalchemy as sa
from databases import Database
from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api.responses import OBJECT_CACHING, empty_response, json_response
from pb_headless.db import write_transaction
from pb_headless.errors import BadRequest, NotFound, PayloadTooLarge, UnsupportedMediaType, ValidationFailed
from pb_headless.query import compile_show, fetch_one, parse_query, plan_show, render_record
from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.planner import ShowPlan
from pb_headless.registry import ObjectSpec

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

MAX_BODY_BYTES = 1024 * 1024
_JSON_MEDIA = re.compile(r"application/(?:[\w.+-]+\+)?json", re.IGNORECASE)


async def create_record(api: HeadlessAPI, request: Request, spec: ObjectSpec, _: str) -> Response:
    body = await read_json_body(request)
    values = _checked(spec, body, partial=False)
    sent = frozenset(values)
    if spec.published is not None and spec.published.name not in values:
        values[spec.published.name] = True  # rows created through the API are published
    _stamp(spec, request, values, ("created_by", "updated_by"))
    values = spec.defaults.for_insert(values)
    async with write_transaction(api.database):
        await _check_unique(api.database, spec, values, exclude=None)
        key = await _insert(api, spec, values, sent)
        record = await _read_back(api, spec, key)
    location = f"{api.api_root(request)}/objects/{spec.name}/{record[spec.pk.name]}"
    return json_response(
        {"data": record}, status_code=201, headers={"Location": location}, cache=OBJECT_CACHING
    )


async def update_record(api: HeadlessAPI, request: Request, spec: ObjectSpec, record_id: str) -> Response:
    key = await _existing_key(api, spec, record_id)
    body = await read_json_body(request)
    values = _checked(spec, body, partial=True)
    sent = frozenset(values)
    async with write_transaction(api.database):
        if values:
            _stamp(spec, request, values, ("updated_by",))
            values = spec.defaults.for_update(values)
            await _check_unique(api.database, spec, values, exclude=key)
            statement = spec.table.update().where(spec.pk.column == key).values(**values)
            await _write(api.database, statement, sent, table=spec.table)
        record = await _read_back(api, spec, key)
    return json_response({"data": record}, cache=OBJECT_CACHING)


async def delete_record(api: HeadlessAPI, request: Request, spec: ObjectSpec, record_id: str) -> Response:
    key = await _existing_key(api, spec, record_id)
    async with write_transaction(api.database):
        await _write(api.database, spec.table.delete().where(spec.pk.column == key), (), refused=spec.pk.name)
    return empty_response(204)


async def read_json_body(request: Request) -> dict[str, Any]:
    """The body as a JSON object: 415 for another media type, 413 over 1 MiB, 400 when malformed."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip()
    if not _JSON_MEDIA.fullmatch(media_type):
        raise UnsupportedMediaType()
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise PayloadTooLarge()
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise PayloadTooLarge()
        chunks.append(chunk)
    try:
        body = orjson.loads(b"".join(chunks))
    except orjson.JSONDecodeError:
        raise BadRequest("The body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object of field values.")
    return body


def _checked(spec: ObjectSpec, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
    result = spec.validator.validate(body, partial=partial)
    if result.errors:
        raise ValidationFailed(result.errors)
    return dict(result.values)


def _stamp(spec: ObjectSpec, request: Request, values: dict[str, Any], columns: tuple[str, ...]) -> None:
    """Record the token's acting user in `created_by` / `updated_by` where the table has them."""
    user_id = request.state.token.user_id
    if user_id is None:
        return
    for name in columns:
        column = spec.audit_columns.get(name)
        if column is not None and name not in values:
            values[name] = (
                int(user_id) if isinstance(column.type, sa.Integer) and user_id.isdigit() else user_id
            )


async def _existing_key(api: HeadlessAPI, spec: ObjectSpec, record_id: str) -> Any:
    """The converted key of a record the object serves (published, inside `query`), or 404."""
    try:
        key = convert(spec.pk, record_id)
    except ConversionError:
        key = None
    if (
        key is None
        or await api.database.fetch_one(compile_show(spec, ShowPlan((spec.pk,)), key, api.dialect)) is None
    ):
        raise NotFound(f"There is no record '{record_id}' in '{spec.name}'.")
    return key


async def _check_unique(database: Database, spec: ObjectSpec, values: dict[str, Any], exclude: Any) -> None:
    taken: dict[str, list[str]] = {}
    for name in spec.validator.unique_fields:
        if name not in values or values[name] is None:
            continue
        query = sa.select(sa.func.count()).select_from(spec.table).where(spec.table.c[name] == values[name])
        if exclude is not None:
            query = query.where(spec.pk.column != exclude)
        if await database.fetch_val(query):
            taken[name] = [spec.validator.unique_message(name)]
    if taken:
        raise ValidationFailed(taken)


async def _insert(api: HeadlessAPI, spec: ObjectSpec, values: dict[str, Any], sent: frozenset[str]) -> Any:
    insert = spec.table.insert().values(**values)
    if spec.pk.name in values:
        await _write(api.database, insert, sent, table=spec.table)
        return values[spec.pk.name]
    if api.dialect == "postgresql":
        return await _write(api.database, insert.returning(spec.pk.column), sent, table=spec.table)
    return await _write(api.database, insert, sent, table=spec.table)  # lastrowid


async def _write(
    database: Database, statement: Any, sent: Collection[str], refused: str | None = None,
    table: sa.Table | None = None,
) -> Any:
    """Run a write; what the database refuses because of the client's values is a 422, not a 500.
    A refused delete names the record (`refused`): other rows still reference it. `sent`: the fields
    the client sent; a refusal naming another column of `table` is the server's fault (a 500)."""
    try:
        return await database.execute(statement)
    except Exception as error:
        if not _is_data_error(error):
            raise
        if refused is not None:
            raise ValidationFailed({refused: ["The record is still referenced by other records."]}) from None
        conflict = _conflict(error, sent, table)
        if conflict is None:
            raise
        raise conflict from None


BODY_KEY = "(body)"  # details key of a conflict of the body as a whole: no field can be named so


def _conflict(error: Exception, sent: Collection[str], table: sa.Table | None) -> ValidationFailed | None:
    """The 422 for a refusal caused by the client's values, or None when it is not theirs: the
    database names a column the client did not send (a NOT NULL column nothing filled, a default
    that breaks a constraint). A refusal naming no column (a multi-column unique or check
    constraint) is the body's as a whole."""
    text = " ".join(str(part) for part in (error, getattr(error, "detail", None)) if part)
    def names(column: str) -> bool:
        return re.search(rf"\b{re.escape(column)}\b", text) is not None
    message = "The value conflicts with the database's constraints."
    named = [name for name in sent if names(name)]
    if named:
        return ValidationFailed({name: [message] for name in named})
    others = [] if table is None else [c.name for c in table.columns if c.name not in sent and names(c.name)]
    return None if others else ValidationFailed({BODY_KEY: [message]})


def _is_data_error(error: Exception) -> bool:
    """Integrity and data errors of any driver (their classes share these names, not a base class)."""
    names = {cls.__name__ for cls in type(error).__mro__}
    markers = (
        "IntegrityError",
        "DataError",
        "IntegrityConstraintViolationError",
        "StringDataRightTruncationError",
        "NumericValueOutOfRangeError",
        "ForeignKeyViolationError",
        "UniqueViolationError",
        "NotNullViolationError",
        "CheckViolationError",
    )
    # MariaDB reports a failed CHECK constraint as an OperationalError, number 4025.
    is_check_failure = "OperationalError" in names and error.args[:1] == (4025,)
    return is_check_failure or any(marker in names for marker in markers)


async def _read_back(api: HeadlessAPI, spec: ObjectSpec, key: Any) -> dict[str, Any]:
    """The record as `show` renders it; a row the client just unpublished is rendered from the table."""
    plan = plan_show(spec, _NO_PARAMETERS)
    record, _ = await fetch_one(api.database, spec, plan, str(key), api.dialect)
    if record is not None:
        return record
    columns = [field.column for field in plan.fields]
    row = await api.database.fetch_one(sa.select(*columns).where(spec.pk.column == key))
    if row is None:
        raise NotFound(f"There is no record '{key}' in '{spec.name}'.")
    return render_record(row, plan.fields)


_NO_PARAMETERS = parse_query(())
