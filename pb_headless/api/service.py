"""The service endpoints: health (no token), me, objects and the token's OpenAPI document."""

from __future__ import annotations

import functools
from collections.abc import Coroutine, Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api.context import RequestContext
from pb_headless.auth import Principal, user_reference
from pb_headless.database.deadline import UnitOfWork
from pb_headless.errors import ServiceUnavailable
from pb_headless.http.responses import NO_STORE, OBJECT_CACHING, json_bytes, json_prepared, json_response
from pb_headless.openapi import document_for
from pb_headless.registry import ObjectSpec

HEALTH_TIMEOUT = 2.0  # /health says "unavailable" within this, however long the database time limit


async def health(
    unit: UnitOfWork, check: Coroutine[Any, Any, None], version: str, *, eager: bool = False
) -> Response:
    """200 while `check` (a read of the shared version) succeeds within the unit's time limit (at
    most HEALTH_TIMEOUT), else 503. `eager`: the check may start at once (`UnitOfWork.run`)."""
    try:
        await unit.run(check, eager=eager)
    except Exception as failure:
        error = failure if isinstance(failure, ServiceUnavailable) else ServiceUnavailable()
        body = {**error.body(), "status": "unavailable", "database": "unavailable", "version": version}
        return json_response(body, status_code=503, headers=error.headers, cache=NO_STORE)
    healthy, raw_headers = _healthy(version)
    return json_prepared(healthy, {}, NO_STORE, raw_headers=raw_headers)


@functools.lru_cache(maxsize=4)
def _healthy(version: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The body and headers of a healthy answer, the same for every request of a release (each
    request gets a copy of the headers)."""
    body = json_bytes({"status": "ok", "database": "ok", "version": version})
    return body, json_prepared(body, {}, NO_STORE).raw_headers


async def me(context: RequestContext, request: Request) -> Response:
    principal, rate = context.principal, context.rate
    token = principal.token
    data = {
        "name": token.name,
        "prefix": token.prefix,
        "scopes": list(token.scopes),
        "expires_at": token.expires_at.isoformat() if token.expires_at else None,
        "user": user_reference(token.user_id, principal.user),
        "objects": [spec.name for spec in reachable(context.snapshot.catalog.values(), principal)],
        "rate_limit": {"limit": rate.limit, "remaining": rate.remaining, "reset": rate.reset},
    }
    return json_response({"data": data}, cache=NO_STORE)


async def list_objects(context: RequestContext, request: Request) -> Response:
    data = [
        {**spec.describe(), "links": {"self": f"{context.api_root}/objects/{spec.name}"}}
        for spec in reachable(context.snapshot.catalog.values(), context.principal)
    ]
    return json_response({"data": data}, cache=OBJECT_CACHING)


async def openapi(context: RequestContext, request: Request) -> Response:
    info = context.info
    document = document_for(
        context.snapshot,
        info.routes,
        context.api_root,
        context.principal.has_scope,
        title=info.title,
        version=info.version,
    )
    return json_response(document, cache=NO_STORE)


SERVICE = {"/me": me, "/objects": list_objects, "/openapi.json": openapi}


def reachable(specs: Iterable[ObjectSpec], principal: Principal) -> list[ObjectSpec]:
    """Objects the token reaches: it carries the object's read or write scope (docs/authentication.md)."""
    return [
        spec
        for spec in specs
        if principal.has_scope(spec.read_scope) or principal.has_scope(spec.write_scope)
    ]
