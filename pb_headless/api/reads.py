"""The generic read endpoints: list (the list envelope) and show (the single-record envelope)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote_plus

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api.context import RequestContext
from pb_headless.api.cursor_links import cursor_links, page_cursors
from pb_headless.api.handling import applied_handling
from pb_headless.api.list_tags import list_tag
from pb_headless.api.records import record_key
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.caches import KEPT_PLAN_QUERY
from pb_headless.errors import ApiError, NotFound, ValidationFailed
from pb_headless.http.conditional import OBJECT_VARY, conditional, entity_tag, not_modified
from pb_headless.http.responses import (
    OBJECT_CACHING,
    json_bytes,
    json_prepared,
    json_response,
    request_header,
)
from pb_headless.query import parse_query, plan_list, plan_show
from pb_headless.query.executor import ListPage, fetch_by_key, fetch_page
from pb_headless.query.grammar import LIST_QUERY, SHOW_QUERY, ParsedQuery
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.registry import ObjectSpec

PAGING_PARAMETERS = frozenset({"offset", "page"})
TRUNCATED_HEADER = "X-Truncated-Relations"
P = TypeVar("P", bound=ShowPlan)


async def list_records(context: RequestContext, request: Request, spec: ObjectSpec, _: str) -> Response:
    plan = planned(context, request, spec, plan_list, LIST_QUERY)
    preference = applied_handling(request, plan.ignored)
    if plan.details:
        raise object_answer(ValidationFailed(plan.details))
    # The change-log positions and the page, from one committed state (docs/performance.md, "A page's
    # own cost"): the page is of the state its tag and kept count are keyed by.
    accelerator = accelerator_of(context.database)
    accelerator.share_reads()
    try:
        derived = await list_tag(context, request, spec, plan)  # before the page: see api/list_tags.py
        if derived is not None and (unchanged := not_modified(request.headers, derived[0], OBJECT_CACHING)):
            return unchanged
        # A search takes one of the token's shares of this instance's searches (database/budget.py).
        shared = context.caches.searches.share(context.principal.token.token_hash) if plan.search else None
        with shared or contextlib.nullcontext():
            page = await fetch_page(
                context.database,
                spec,
                plan,
                context.backend.name,
                context.caches,
                context.data_version,
                written=None if derived is None else derived[1],
            )
    finally:
        accelerator.unshare_reads()
    keyset = plan.cursor is not None
    positions = page_cursors(plan, page)
    meta: dict[str, Any] = {
        "total": page.total,
        "count": len(page.records),
        "limit": plan.limit,
        "offset": None if keyset else plan.offset,
        "has_more": _has_more(plan, page, positions),
        **positions,
    }
    if page.estimated:
        meta["total_estimated"] = True
    if plan.ignored:
        meta["ignored"] = list(plan.ignored)
    if page.truncated:
        meta["truncated"] = page.truncated
    address = f"{context.api_root}/objects/{spec.name}"
    written = request.scope.get("query_string", b"").decode("latin-1")
    if keyset:
        links = cursor_links(address, written, positions)
    else:
        links = {
            "self": _link(address, written, None),
            "next": _link(address, written, plan.offset + plan.limit)
            if meta["has_more"] and plan.limit
            else None,
            "prev": _link(address, written, max(plan.offset - plan.limit, 0)) if plan.offset > 0 else None,
        }
    body = {"data": page.records, "meta": meta, "links": links}
    headers = {**truncation_headers(page.truncated), **preference}
    response = json_response(body, headers=headers, cache=OBJECT_CACHING)
    return conditional(
        request_header(request.scope, b"if-none-match"), response, None if derived is None else derived[0]
    )


def _has_more(plan: ListPlan, page: ListPage, positions: dict[str, str | None]) -> bool:
    """Whether records follow this page: read one row past it where it was, else from the total."""
    if plan.cursor is not None:
        return positions["next_cursor"] is not None
    if page.more is not None:
        return page.more
    return plan.offset + len(page.records) < (page.total or 0)


async def show_record(
    context: RequestContext, request: Request, spec: ObjectSpec, record_id: str
) -> Response:
    plan = planned(context, request, spec, plan_show, SHOW_QUERY)
    preference = applied_handling(request, plan.ignored)
    record: dict[str, Any] | None = None
    truncated: Mapping[str, Any] = {}
    key = record_key(spec, record_id)
    if key is not None:
        record, truncated = await fetch_by_key(
            context.database, spec, plan, key, context.backend.name, context.caches
        )
    if record is None:
        raise object_answer(NotFound(f"There is no record '{record_id}' in '{spec.name}'."))
    headers = {**truncation_headers(truncated), **preference}
    body = json_bytes({"data": record})
    tag = entity_tag(body)
    response = json_prepared(body, headers, OBJECT_CACHING)
    return conditional(request_header(request.scope, b"if-none-match"), response, tag)


def planned(
    context: RequestContext,
    request: Request,
    spec: ObjectSpec,
    plan: Callable[[ObjectSpec, ParsedQuery], P],
    accepted: frozenset[str],
) -> P:
    """The plan of this query string for this object: planning is pure (query/planner.py), so a plan
    made once is kept by object and query string as written and used again (`caches.plans`); a plan
    that answers 422 is made again each time, as is one of a query string past `KEPT_PLAN_QUERY`.
    `accepted` names the parameters this read takes (query/grammar.py); `plan` implies it."""
    written: bytes = request.scope.get("query_string", b"")
    key = (spec, plan, written)
    found: P | None = context.caches.plans.get(key)  # type: ignore[assignment]
    if found is not None:
        return found
    made = plan(spec, parse_query(request.query_params.multi_items(), accepted))
    if not getattr(made, "details", None) and len(written) <= KEPT_PLAN_QUERY:
        context.caches.plans.put(key, made)
    return made


def truncation_headers(truncated: Mapping[str, Any]) -> dict[str, str]:
    """`X-Truncated-Relations: a, b`: the to-many relations that show only their first records (a show
    answer has only `data`, so the header is where it says so; lists say it in `meta.truncated` too)."""
    return {TRUNCATED_HEADER: ", ".join(truncated)} if truncated else {}


def object_answer(error: ApiError) -> ApiError:
    """Object answers carry `private, no-cache` and `Vary`, a record's 404 and a 422 too
    (docs/endpoints.md)."""
    error.headers.setdefault("Cache-Control", OBJECT_CACHING)
    error.headers.setdefault("Vary", OBJECT_VARY)
    return error


def _link(address: str, written: str, offset: int | None) -> str:
    """This page's address with the query exactly as the client wrote it; another page's with every
    other parameter kept as written and `offset` replaced (`page` gives way to it)."""
    query = written
    if offset is not None:
        kept = [part for part in written.split("&") if part and _key(part) not in PAGING_PARAMETERS]
        query = "&".join([*kept, f"offset={offset}"])
    return f"{address}?{query}" if query else address


def _key(part: str) -> str:
    return unquote_plus(part.partition("=")[0])
