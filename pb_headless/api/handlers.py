"""The endpoints behind the authentication step: service endpoints, objects, custom routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api import objects
from pb_headless.api.responses import NO_STORE, json_response
from pb_headless.api.routing import METHODS_OF, OPERATIONS, READ_METHODS, Match
from pb_headless.auth import Principal, find_api, user_reference
from pb_headless.errors import Forbidden, MethodNotAllowed, NotFound, ServiceUnavailable, UnknownObject
from pb_headless.registry import ObjectSpec
from pb_headless.routes import run_endpoint

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI


async def health(api: HeadlessAPI, request: Request) -> Response:
    _allow(request, READ_METHODS)
    try:
        await api.database.fetch_val("SELECT 1")
    except Exception:
        body = {"status": "unavailable", "database": "unavailable", "version": api.version}
        error = ServiceUnavailable("The database does not answer.")
        return json_response({**error.body(), **body}, status_code=503, cache=NO_STORE)
    return json_response({"status": "ok", "database": "ok", "version": api.version}, cache=NO_STORE)


async def dispatch(api: HeadlessAPI, request: Request, found: Match, principal: Principal) -> Response:
    if found.kind == "service":
        _allow(request, READ_METHODS)
        return await SERVICE[found.name](api, request, principal)
    if found.kind in ("collection", "record"):
        return await _object(api, request, found, principal)
    if found.kind == "custom":
        return await _custom(request, found, principal)
    raise NotFound()


async def me(api: HeadlessAPI, request: Request, principal: Principal) -> Response:
    token, snapshot, rate = principal.token, request.state.snapshot, request.state.rate
    data = {
        "name": token.name,
        "prefix": token.prefix,
        "scopes": list(token.scopes),
        "expires_at": token.expires_at.isoformat() if token.expires_at else None,
        "user": user_reference(token.user_id, principal.user),
        "objects": [spec.name for spec in reachable(snapshot.catalog.values(), principal)],
        "rate_limit": {"limit": rate.limit, "remaining": rate.remaining, "reset": rate.reset},
    }
    return json_response({"data": data}, cache=NO_STORE)


async def list_objects(api: HeadlessAPI, request: Request, principal: Principal) -> Response:
    root = api.api_root(request)
    data = [
        {**spec.describe(), "links": {"self": f"{root}/objects/{spec.name}"}}
        for spec in reachable(request.state.snapshot.catalog.values(), principal)
    ]
    return json_response({"data": data}, cache=objects.OBJECT_CACHING)


async def openapi(api: HeadlessAPI, request: Request, principal: Principal) -> Response:
    from pb_headless.openapi import document_for

    document = document_for(api, request, principal)
    return json_response(document, cache=NO_STORE)


SERVICE = {"/me": me, "/objects": list_objects, "/openapi.json": openapi}


def reachable(specs: Any, principal: Principal) -> list[ObjectSpec]:
    """Objects the token reaches: it carries the object's read or write scope (CONTRACT §1.5)."""
    return [
        spec
        for spec in specs
        if principal.has_scope(spec.read_scope) or principal.has_scope(spec.write_scope)
    ]


async def _object(api: HeadlessAPI, request: Request, found: Match, principal: Principal) -> Response:
    spec = request.state.snapshot.catalog.get(found.name)
    if spec is None or not reachable((spec,), principal):
        raise UnknownObject(
            f"There is no object named '{found.name}'.", headers={"Cache-Control": objects.OBJECT_CACHING}
        )
    method = "GET" if request.method == "HEAD" else request.method
    operation = OPERATIONS.get((found.kind, method))
    if operation is None or operation not in spec.operations:
        allowed = [
            m for op, methods in METHODS_OF[found.kind].items() if op in spec.operations for m in methods
        ]
        raise MethodNotAllowed([*allowed, "OPTIONS"])
    required = spec.scope_for(operation)
    if not principal.has_scope(required):
        raise Forbidden(required)
    return await objects.HANDLERS[operation](api, request, spec, found.record_id)


async def _custom(request: Request, found: Match, principal: Principal) -> Response:
    """A custom route: 405 for a method it does not serve, then its guard (403), then the endpoint."""
    method = "GET" if request.method == "HEAD" else request.method
    chosen = next(((d, params) for d, params in found.candidates if d.method == method), None)
    if chosen is None:
        allowed = {d.method for d in found.routes} | {"OPTIONS"}
        raise MethodNotAllowed(allowed | ({"HEAD"} if "GET" in allowed else set()))
    definition, params = chosen
    definition.guard.check(principal)
    request.scope["path_params"] = params
    request.state.database = find_api(request).database
    return await run_endpoint(definition, request)


def _allow(request: Request, methods: tuple[str, ...]) -> None:
    if request.method not in methods:
        raise MethodNotAllowed([*methods, "OPTIONS"])
