"""From an authenticated request to its endpoint: the object, operation and scope checks in the order
of docs/endpoints.md, then the handler (service endpoint, list/show, create/update/delete, custom route)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from pb_headless.api import reads, writes
from pb_headless.api.addresses import READ_METHODS, Match
from pb_headless.api.batch import batch_endpoint
from pb_headless.api.changes import changes_endpoint
from pb_headless.api.context import RequestContext
from pb_headless.api.object_check import reached_object, require_scope
from pb_headless.api.service import SERVICE
from pb_headless.custom_routes import run_endpoint
from pb_headless.errors import MethodNotAllowed, NotFound
from pb_headless.idempotency.requests import Claim, once
from pb_headless.operations import Operation
from pb_headless.registry import ObjectSpec

Handler = Callable[[RequestContext, Request, ObjectSpec, str], Awaitable[Response]]
HANDLERS: dict[Operation, Handler] = {
    Operation.LIST: reads.list_records,
    Operation.SHOW: reads.show_record,
    Operation.CREATE: writes.create_record,
    Operation.UPDATE: writes.update_record,
    Operation.DELETE: writes.delete_record,
}


async def dispatch(context: RequestContext, request: Request, found: Match) -> Response:
    if found.kind == "service":
        _allow(request, READ_METHODS)
        return await SERVICE[found.name](context, request)
    if found.kind == "batch":
        _allow(request, ("POST",))
        return await batch_endpoint(context, request)
    if found.kind in ("collection", "record"):
        return await _object(context, request, found)
    if found.kind in ("changes", "stream"):
        return await changes_endpoint(context, request, found.name, stream=found.kind == "stream")
    if found.kind == "custom":
        return await _custom(context, request, found)
    raise NotFound()


async def _object(context: RequestContext, request: Request, found: Match) -> Response:
    principal = context.principal
    spec = reached_object(context.snapshot.catalog, principal, found.name)
    method = "GET" if request.method == "HEAD" else request.method
    operation = Operation.addressed_by(found.kind, method)
    if operation is None or operation not in spec.operations:
        raise MethodNotAllowed([*Operation.allowed_methods(found.kind, spec.operations), "OPTIONS"])
    require_scope(principal, spec.scope_for(operation))
    handler = HANDLERS[operation]
    if operation is Operation.CREATE:  # a POST a client may send again with its Idempotency-Key

        def create(claim: Claim | None) -> Awaitable[Response]:
            return writes.create_record(context, request, spec, found.record_id, claim)

        return await once(context.database, request, principal.token.token_hash, context.body.content, create)
    return await handler(context, request, spec, found.record_id)


async def _custom(context: RequestContext, request: Request, found: Match) -> Response:
    """A custom route: 405 for a method it does not serve, then its guard (403), then the endpoint."""
    method = "GET" if request.method == "HEAD" else request.method
    chosen = next(((d, params) for d, params in found.candidates if d.method == method), None)
    if chosen is None:
        allowed = {d.method for d in found.routes} | {"OPTIONS"}
        raise MethodNotAllowed(allowed | ({"HEAD"} if "GET" in allowed else set()))
    definition, params = chosen
    principal = context.principal
    definition.guard.check(principal)
    request.scope["path_params"] = params
    # What integrators' endpoints read (docs/integrators.md).
    request.state.token, request.state.user = principal.token, principal.user
    request.state.principal, request.state.database = principal, context.database
    return await run_endpoint(definition, request)


def _allow(request: Request, methods: tuple[str, ...]) -> None:
    if request.method not in methods:
        raise MethodNotAllowed([*methods, "OPTIONS"])
