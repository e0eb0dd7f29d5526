"""The generic read endpoints (list, show) and the table of every object operation's handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api import writes
from pb_headless.api.responses import OBJECT_CACHING, json_response
from pb_headless.errors import ApiError, NotFound, ValidationFailed
from pb_headless.query import fetch_list, fetch_one, parse_query, plan_list, plan_show
from pb_headless.registry import ObjectSpec

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

Handler = Callable[["HeadlessAPI", Request, ObjectSpec, str], Awaitable[Response]]
PAGING_PARAMETERS = frozenset({"offset", "page"})
TRUNCATED_HEADER = "X-Truncated-Relations"


async def list_records(api: HeadlessAPI, request: Request, spec: ObjectSpec, _: str) -> Response:
    pairs = request.query_params.multi_items()
    plan = plan_list(spec, parse_query(pairs))
    if plan.details:
        raise _object_answer(ValidationFailed(plan.details))
    records, total, truncated = await fetch_list(api.database, spec, plan, api.dialect)
    meta: dict[str, Any] = {
        "total": total, "count": len(records), "limit": plan.limit, "offset": plan.offset,
        "has_more": plan.offset + len(records) < total,
    }
    if plan.ignored:
        meta["ignored"] = list(plan.ignored)
    if truncated:
        meta["truncated"] = truncated
    address = f"{api.api_root(request)}/objects/{spec.name}"
    links = {
        "self": _link(address, pairs, None),
        "next": _link(address, pairs, plan.offset + plan.limit) if meta["has_more"] and plan.limit else None,
        "prev": _link(address, pairs, max(plan.offset - plan.limit, 0)) if plan.offset > 0 else None,
    }
    body = {"data": records, "meta": meta, "links": links}
    return json_response(body, headers=truncation_headers(truncated), cache=OBJECT_CACHING)


async def show_record(api: HeadlessAPI, request: Request, spec: ObjectSpec, record_id: str) -> Response:
    plan = plan_show(spec, parse_query(request.query_params.multi_items()))
    record, truncated = await fetch_one(api.database, spec, plan, record_id, api.dialect)
    if record is None:
        raise _object_answer(NotFound(f"There is no record '{record_id}' in '{spec.name}'."))
    return json_response({"data": record}, headers=truncation_headers(truncated), cache=OBJECT_CACHING)


def truncation_headers(truncated: Mapping[str, Any]) -> dict[str, str]:
    """`X-Truncated-Relations: a, b`: the to-many relations that show only their first records (a show
    answer has only `data`, so the header is where it says so; lists say it in `meta.truncated` too)."""
    return {TRUNCATED_HEADER: ", ".join(truncated)} if truncated else {}


def _object_answer(error: ApiError) -> ApiError:
    """CONTRACT §11: object answers carry `private, no-cache`, the 404 of a record and a 422 too."""
    error.headers.setdefault("Cache-Control", OBJECT_CACHING)
    return error


def _link(address: str, pairs: list[tuple[str, str]], offset: int | None) -> str:
    """This page's address, or another page's: every other parameter kept, `offset` replaced."""
    if offset is not None:
        kept = [(key, value) for key, value in pairs if key not in PAGING_PARAMETERS]
        pairs = [*kept, ("offset", str(offset))]
    query = urlencode(pairs, quote_via=quote, safe="[],*-")
    return f"{address}?{query}" if query else address


HANDLERS: dict[str, Handler] = {
    "list": list_records, "show": show_record,
    "create": writes.create_record, "update": writes.update_record, "delete": writes.delete_record,
}
