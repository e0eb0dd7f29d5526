"""The generic read endpoints: list (the list envelope) and show (the single-record envelope)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote_plus

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api.context import RequestContext
from pb_headless.api.cursor_links import cursor_links, page_cursors
from pb_headless.api.handling import applied_handling
from pb_headless.api.kept_lists import KEPT_BODY_MOST, KeptList
from pb_headless.api.list_tags import list_tag
from pb_headless.api.records import record_key
from pb_headless.database.accelerators import accelerator_of
from pb_headless.errors import ApiError, NotFound, ValidationFailed
from pb_headless.http.conditional import OBJECT_VARY, conditional, entity_tag, not_modified
from pb_headless.http.responses import (
    OBJECT_CACHING,
    json_bytes,
    json_prepared,
    request_header,
)
from pb_headless.query import parse_query, plan_list, plan_show
from pb_headless.query.executor import ListPage, fetch_page, fetch_record
from pb_headless.query.grammar import LIST_QUERY, SHOW_QUERY, ParsedQuery
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.query.prepared import CompiledRead, Reader, kept_read
from pb_headless.registry import ObjectSpec

PAGING_PARAMETERS = frozenset({"offset", "page"})
TRUNCATED_HEADER = "X-Truncated-Relations"
P = TypeVar("P", bound=ShowPlan)


async def list_records(context: RequestContext, request: Request, spec: ObjectSpec, _: str) -> Response:
    """plan → tag → kept answer → page → envelope → conditional (docs/architecture.md, "The compiled
    read")."""
    reader = read_on(context)
    compiled = planned(reader, request, spec, plan_list, LIST_QUERY)
    plan = compiled.plan
    preference = applied_handling(request, plan.ignored)
    if plan.details:
        raise object_answer(ValidationFailed(plan.details))
    # The change-log positions and the page, from one committed state (docs/performance.md, "A page's
    # own cost"): the page is of the state its tag and kept count are keyed by.
    accelerator = accelerator_of(context.database)
    accelerator.share_reads()
    try:
        tagged = await list_tag(context, request, spec, plan)  # before the page: see api/list_tags.py
        if tagged is None:
            page = await _page(context, reader, compiled, None)
        else:
            if unchanged := not_modified(request.headers, tagged.tag, OBJECT_CACHING):
                return unchanged
            kept = None if tagged.asked is None else context.caches.list_answers.get(tagged.asked)
            if isinstance(kept, KeptList) and kept.tag == tagged.tag:  # the same answer (api/kept_lists.py)
                return _answer(request, kept.body, {**dict(kept.headers), **preference}, tagged.tag)
            page = await _page(context, reader, compiled, tagged.positions)
    finally:
        accelerator.unshare_reads()
    own = truncation_headers(page.truncated)
    body = json_bytes(_envelope(context, request, spec, plan, page))
    if tagged is None:
        return _answer(request, body, {**own, **preference}, None)
    if tagged.asked is not None and len(body) <= KEPT_BODY_MOST:
        context.caches.list_answers.put(tagged.asked, KeptList(tagged.tag, body, tuple(own.items())))
    return _answer(request, body, {**own, **preference}, tagged.tag)


def _answer(request: Request, body: bytes, headers: Mapping[str, str], tag: str | None) -> Response:
    response = json_prepared(body, headers, OBJECT_CACHING)
    return conditional(request_header(request.scope, b"if-none-match"), response, tag)


async def _page(
    context: RequestContext, reader: Reader, compiled: CompiledRead[ListPlan], positions: Hashable | None
) -> ListPage:
    """The page of a compiled list, its total kept with the change-log `positions` the tag was made
    of, else with the request's data version. A search takes one of the token's shares of this
    instance's searches (database/budget.py)."""
    version = context.data_version if positions is None else ("changes", positions)
    if not compiled.plan.search:
        return await fetch_page(reader, compiled, version)
    with context.caches.searches.share(context.principal.token.token_hash):
        return await fetch_page(reader, compiled, version)


def _envelope(
    context: RequestContext, request: Request, spec: ObjectSpec, plan: ListPlan, page: ListPage
) -> dict[str, Any]:
    """The list envelope: `data`, `meta` (total, paging, what was ignored or cut) and `links`."""
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
    return {"data": page.records, "meta": meta, "links": links}


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
    reader = read_on(context)
    compiled = planned(reader, request, spec, plan_show, SHOW_QUERY)
    preference = applied_handling(request, compiled.plan.ignored)
    record: dict[str, Any] | None = None
    truncated: Mapping[str, Any] = {}
    key = record_key(spec, record_id)
    if key is not None:
        record, truncated = await fetch_record(reader, compiled, key)
    if record is None:
        raise object_answer(NotFound(f"There is no record '{record_id}' in '{spec.name}'."))
    headers = {**truncation_headers(truncated), **preference}
    body = json_bytes({"data": record})
    tag = entity_tag(body)
    response = json_prepared(body, headers, OBJECT_CACHING)
    return conditional(request_header(request.scope, b"if-none-match"), response, tag)


def read_on(context: RequestContext) -> Reader:
    """Where this request's reads run: its database, that database's backend, the API's caches."""
    return Reader(context.database, context.backend, context.caches)


def planned(
    reader: Reader,
    request: Request,
    spec: ObjectSpec,
    plan: Callable[[ObjectSpec, ParsedQuery], P],
    accepted: frozenset[str],
) -> CompiledRead[P]:
    """The compiled read of this request's query string, kept by object and query string as written
    (query/prepared.py `kept_read`). `accepted` names the parameters this read takes
    (query/grammar.py); `plan` implies it."""
    written: bytes = request.scope.get("query_string", b"")
    return kept_read(
        reader, spec, plan, written, lambda: parse_query(request.query_params.multi_items(), accepted)
    )


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
