"""`GET /changes/{name}` (what changed since a cursor) and `GET /changes/{name}/stream` (the same, live).

Checks in the order of every endpoint (docs/endpoints.md), by the same object check
(api/object_check.py): the object (404 `unknown_object` when the token reaches no such object), the
object's read scope (403), then the parameters: a `since` (or `Last-Event-ID`) that does not decode
is a 422, one the log was pruned past a 410. The change log itself is pb_headless/changes/.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api.context import RequestContext
from pb_headless.api.event_stream import EventStream
from pb_headless.api.handling import applied_handling
from pb_headless.api.object_check import reached_object, require_scope
from pb_headless.changes.cursor import decode_cursor, encode_cursor
from pb_headless.changes.feed import Reader, read_page
from pb_headless.changes.hub import StreamHub
from pb_headless.changes.stream import StreamSession
from pb_headless.errors import ApiError, CursorExpired, MethodNotAllowed, NotFound, ValidationFailed
from pb_headless.http.exit_signal import close_on_server_exit
from pb_headless.http.responses import OBJECT_CACHING, json_response
from pb_headless.query import parse_query
from pb_headless.query.grammar import SHOW_QUERY, ParsedQuery
from pb_headless.query.planner import ListPlan, ShowPlan, plan_selection
from pb_headless.registry import ObjectSpec

CURSOR_PROBLEM = "must be a cursor this API gave (the 'cursor' of an entry, or 'meta.next')"
OTHER_FILTERS = (
    "was given with other filter[...] or search parameters: send the ones it was given with,"
    " or start again from a cursor for now"
)
# The parameters of the feed and of the stream beyond `since`: any other is ignored and named
# (`meta.ignored`), or refused under `Prefer: handling=strict`, as on a list.
STREAM_QUERY = SHOW_QUERY | {"filter", "search"}
FEED_QUERY = STREAM_QUERY | {"limit"}
SINCE = frozenset({"since"})


async def changes_endpoint(context: RequestContext, request: Request, name: str, stream: bool) -> Response:
    if request.method not in ("GET", "HEAD"):
        raise MethodNotAllowed(["GET", "HEAD", "OPTIONS"])
    hub: StreamHub | None = context.streams
    if hub is None or context.changes is None or not context.changes.enabled:
        raise NotFound("This site keeps no change log (docs/changes.md).")
    spec = _readable(context.snapshot.catalog, context.principal, name)
    query = parse_query(request.query_params.multi_items(), STREAM_QUERY if stream else FEED_QUERY, SINCE)
    plan = plan_selection(spec, query)
    if plan.details:
        raise ValidationFailed(plan.details)
    preference = applied_handling(request, plan.ignored)
    reader = _reader(context, hub, spec, plan)
    if stream:
        return await _open_stream(context, request, hub, reader, query)
    since = _cursor(request.query_params.get("since"), "since", reader.digest)
    noted = {"ignored": list(plan.ignored)} if plan.ignored else {}
    if since is None:
        now = encode_cursor((await hub.log.bounds()).head, reader.digest)
        return _answer([], {"next": now, "has_more": False, "count": 0, **noted}, preference)
    limit = spec.per_page if query.limit is None else min(query.limit.value, spec.max_per_page)
    page = await read_page(reader, since, max(limit, 1))
    entries = page.entries[:limit]
    following = page.next if len(entries) == len(page.entries) else since
    meta = {
        "next": encode_cursor(following, reader.digest),
        "has_more": page.has_more or len(entries) < len(page.entries),
    }
    return _answer(entries, {**meta, "count": len(entries), **noted}, preference)


def _readable(catalog: Mapping[str, ObjectSpec], principal: Any, name: str) -> ObjectSpec:
    """The object, as every endpoint checks it, and its read scope."""
    spec = reached_object(catalog, principal, name)
    require_scope(principal, spec.read_scope)
    return spec


def _reader(context: RequestContext, hub: StreamHub, spec: ObjectSpec, plan: ListPlan) -> Reader:
    """Records are rendered by `fields` and `with` alone, so that readers with different filters
    share the stream's renderings; the filters and search select (`selection`)."""
    shape = ShowPlan(plan.fields, plan.relations, plan.ignored)
    selection = plan if plan.made_for else None
    return Reader(hub.log, context.database, context.backend.name, spec, shape, selection)


def _cursor(written: str | None, key: str, digest: str) -> int | None:
    if written is None:
        return None
    decoded = decode_cursor(written.strip())
    if decoded is None:
        raise ValidationFailed({key: [CURSOR_PROBLEM]})
    position, made_for = decoded
    if made_for != digest:
        raise ValidationFailed({key: [OTHER_FILTERS]})
    return position


def _answer(entries: list[dict[str, Any]], meta: dict[str, Any], headers: dict[str, str]) -> Response:
    return json_response({"data": entries, "meta": meta}, headers=headers, cache=OBJECT_CACHING)


async def _open_stream(
    context: RequestContext, request: Request, hub: StreamHub, reader: Reader, query: ParsedQuery
) -> Response:
    resumed = request.headers.get("last-event-id")
    if resumed is not None:
        since = _cursor(resumed, "Last-Event-ID", reader.digest)
    else:
        since = _cursor(request.query_params.get("since"), "since", reader.digest)
    edges = await hub.log.bounds()
    if since is None:
        since = edges.head  # neither: the stream starts at the moment it opens
    elif since < edges.pruned:
        raise CursorExpired()
    slots = contextlib.ExitStack()
    wake = slots.enter_context(hub.stream_slot(context.principal.token.id, reader.spec.table.name))
    close_on_server_exit(hub)
    name, headers = reader.spec.name, request.headers

    async def recheck() -> Reader | None:
        """The token and the object as they are now; None ends the stream."""
        try:
            authentication = await hub.authenticator.authenticate(headers)
            spec = _readable(authentication.snapshot.catalog, authentication.principal, name)
        except ApiError:
            return None
        plan = plan_selection(spec, query)
        if plan.details or plan.made_for != reader.digest:  # a filter field unpublished: not the same feed
            return None
        return _reader(context, hub, spec, plan)

    session = StreamSession(hub, reader, since, wake, recheck)
    stream_headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return EventStream(session, slots.close, stream_headers)
