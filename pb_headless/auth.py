"""Authentication: reading the token from a request, the principal it yields, and the `ApiAuth` guard.

`ApiAuth` is the one guard: the generic endpoints, custom routes under the API and routes the host
defines elsewhere all call it, so every one of them answers 401 and 403 the same way.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from pb_headless.errors import ApiError, BadRequest, Forbidden, error_response
from pb_headless.scopes import has_required_scope, is_valid_scope
from pb_headless.tokens import TokenInfo

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

API_SCOPE_KEY = "pb_headless.api"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request runs as: its token and, when the token names one, the host's acting user."""

    token: TokenInfo
    user: Any = None

    def has_scope(self, required: str) -> bool:
        return has_required_scope(self.token.scopes, required)


def user_reference(user_id: str | None, user: Any) -> dict[str, Any] | None:
    """`{"id", "username"}` of an acting user, whether the host's loader returns a mapping or an object."""
    if user_id is None:
        return None
    if user is None:
        return {"id": user_id, "username": None}
    if isinstance(user, Mapping):
        return {"id": user.get("id", user_id), "username": user.get("username")}
    return {"id": getattr(user, "id", user_id), "username": getattr(user, "username", None)}


def token_from_headers(headers: Mapping[str, str]) -> str | None:
    """The token of `Authorization: Bearer <t>` or `X-API-Key: <t>`; both present and different → 400."""
    bearer = None
    authorization = headers.get("authorization")
    if authorization:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            bearer = value.strip()
    api_key = (headers.get("x-api-key") or "").strip() or None
    if bearer and api_key and bearer != api_key:
        raise BadRequest("Authorization and X-API-Key carry different tokens; send one.")
    return bearer or api_key


class ApiAuth:
    """The guard: `ApiAuth("<scope>")` demands a scope, `ApiAuth()` accepts any live token.

    Under the API it is attached to custom routes (`@route(..., guard="ApiAuth:reports.read")`).
    On a host's own endpoint it is used as a decorator, `@ApiAuth("reports.read")`, as a FastAPI
    dependency, `Depends(ApiAuth("reports.read").dependency)`, or called directly,
    `await ApiAuth("reports.read").authorize(request)`. In every form the answers are those of the
    generic endpoints, and the endpoint finds `request.state.token`, `.user`, `.principal` and `.database`.
    """

    __slots__ = ("scope",)

    def __init__(self, scope: str | None = None) -> None:
        if scope is not None and not (is_valid_scope(scope) and scope != "*" and not scope.endswith(".*")):
            raise ValueError(f"ApiAuth: {scope!r} is not a scope of the form '<group>.<action>'")
        self.scope = scope

    @classmethod
    def parse(cls, guard: str | ApiAuth | None) -> ApiAuth:
        """`"ApiAuth"` or `"ApiAuth:<scope>"` (the string forms used where routes are declared)."""
        if isinstance(guard, ApiAuth):
            return guard
        if guard is None or guard.strip() == "ApiAuth":
            return cls()
        name, _, scope = guard.partition(":")
        if name.strip() != "ApiAuth" or not scope.strip():
            raise ValueError(f"unknown guard {guard!r}: use 'ApiAuth' or 'ApiAuth:<scope>'")
        return cls(scope.strip())

    def __repr__(self) -> str:
        return f"ApiAuth({self.scope!r})" if self.scope else "ApiAuth()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ApiAuth) and other.scope == self.scope

    def __hash__(self) -> int:
        return hash((ApiAuth, self.scope))

    @property
    def spec(self) -> str:
        return f"ApiAuth:{self.scope}" if self.scope else "ApiAuth"

    def allows(self, principal: Principal) -> bool:
        return self.scope is None or principal.has_scope(self.scope)

    def check(self, principal: Principal) -> None:
        if not self.allows(principal):
            raise Forbidden(self.scope or "")

    async def authorize(self, request: Request) -> Principal:
        """Authenticate the request as the API would and demand this guard's scope; raises `ApiError`."""
        api = find_api(request)
        principal = await api.authenticate(request)
        self.check(principal)
        request.state.database = api.database
        return principal

    async def dependency(self, request: Request) -> Principal:
        """FastAPI: `principal: Principal = Depends(ApiAuth("reports.read").dependency)`."""
        _render_api_errors(request)
        return await self.authorize(request)

    def __call__(self, endpoint: Callable[[Request], Any]) -> Callable[[Request], Awaitable[Response]]:
        """Guard a host endpoint that lives outside the API sub-application."""

        @functools.wraps(endpoint)
        async def guarded(request: Request) -> Response:
            try:
                await self.authorize(request)
                if _is_async(endpoint):
                    response = await endpoint(request)
                else:  # as Starlette does for a plain function: keep blocking work off the event loop
                    response = await run_in_threadpool(endpoint, request)
                    if inspect.isawaitable(response):  # a partial or wrapper around a coroutine function
                        response = await response
            except ApiError as error:
                return error_response(error)
            return response  # type: ignore[no-any-return]

        guarded.__pb_guard__ = self  # type: ignore[attr-defined]
        return guarded


def _is_async(endpoint: Any) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    call = type(endpoint).__call__ if not inspect.isroutine(endpoint) else None
    return inspect.iscoroutinefunction(endpoint) or inspect.iscoroutinefunction(call)


async def render_api_error(request: Request, error: Exception) -> Response:
    """An exception handler for frameworks that route errors to handlers (Starlette, FastAPI)."""
    if not isinstance(error, ApiError):
        raise error
    return error_response(error)


def _render_api_errors(request: Request) -> None:
    """Make the running Starlette/FastAPI app render `ApiError` as the envelope.

    A dependency cannot answer by itself: it raises, and the app's exception middleware looks the
    exception up in the handler table it keeps in the scope. Adding ours there (unless the host
    chose its own) gives a FastAPI endpoint the generic 401/403, WWW-Authenticate included, with no
    set-up by the host.
    """
    tables = request.scope.get("starlette.exception_handlers")
    if isinstance(tables, tuple) and tables and isinstance(tables[0], dict):
        tables[0].setdefault(ApiError, render_api_error)


def find_api(request: Request) -> HeadlessAPI:
    """The HeadlessAPI serving this request: set by `CORSMiddleware` (wrapping the host) or the host's
    `app.state.pb_headless`."""
    api = request.scope.get(API_SCOPE_KEY)
    if api is None and "app" in request.scope:
        api = getattr(getattr(request.app, "state", None), "pb_headless", None)
    if api is None:
        raise RuntimeError("ApiAuth outside the API needs the host wrapped in pb_headless.CORSMiddleware"
                           "(app, api=...) or app.state.pb_headless = <HeadlessAPI>")
    return api
