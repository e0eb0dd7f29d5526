"""`If-Match` on updates and deletes: the write goes ahead only while the record is the version the
client names (docs/writes.md). Checked inside the write's transaction, after the row is locked, so two
clients holding the same tag cannot both write."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers

from pb_headless.api.context import RequestContext
from pb_headless.api.reads import object_answer
from pb_headless.api.records import canonical_id
from pb_headless.errors import PreconditionFailed
from pb_headless.http.conditional import record_tag, strong_match, unquoted_tags
from pb_headless.query import fetch_one, parse_query, plan_show
from pb_headless.registry import ObjectSpec

_NO_PARAMETERS = parse_query(())


async def plain_record(context: RequestContext, spec: ObjectSpec, key: Any) -> dict[str, Any] | None:
    """The record as its show answer without query parameters renders it, or None when not served."""
    plan = plan_show(spec, _NO_PARAMETERS)
    record, _ = await fetch_one(
        context.database, spec, plan, canonical_id(spec, key), context.backend.name, context.caches
    )
    return record


async def check_if_match(context: RequestContext, headers: Headers, spec: ObjectSpec, key: Any) -> None:
    """412 `precondition_failed` unless `If-Match` (when sent) names the record's current tag or `*`.
    The caller holds the row's lock (or SQLite's write lock) and has checked that the row is served."""
    await check_tag(context, headers.get("if-match", ""), spec, key)


async def check_tag(context: RequestContext, header: str, spec: ObjectSpec, key: Any) -> None:
    """`check_if_match` for an `If-Match` value given apart from headers (a batch's `if_match`)."""
    header = header.strip()
    if not header:  # an empty If-Match names nothing: as without the header
        return
    record = await plain_record(context, spec, key)
    if not strong_match(header, None if record is None else record_tag(record)):
        raise object_answer(PreconditionFailed(_mismatch(header)))


def _mismatch(header: str) -> str | None:
    """The 412's message: "has changed" is true only of a tag; a value without its quotes (`abc` for
    `"abc"`) was never one, and the client should hear that instead."""
    unquoted = unquoted_tags(header)
    if not unquoted:
        return None
    named = ", ".join(unquoted)
    return (
        f"If-Match holds {named}, which is not a quoted entity-tag: send the ETag exactly as the API "
        'gave it, quotes included (`If-Match: "..."`).'
    )


def tag_headers(context: RequestContext, spec: ObjectSpec, record: dict[str, Any]) -> dict[str, str]:
    """The `ETag` a write answer carries: the tag the record's plain show gives, for a token that may
    read it (one that may only write learns only the key)."""
    if not context.principal.has_scope(spec.read_scope):
        return {}
    return {"ETag": record_tag(record)}
