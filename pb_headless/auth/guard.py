"""The `ApiAuth` guard: the one check behind the generic endpoints, custom routes under the API, and
routes the host defines elsewhere, so every one of them answers 401 and 403 the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from pb_headless.auth.authenticator import Authenticator
from pb_headless.auth.principal import Principal
from pb_headless.database.deadline import within
from pb_headless.errors import ApiError, Forbidden, error_response
from pb_headless.http.calls import is_async_callable, maybe_await
from pb_headless.scopes import is_valid_scope

# Where `CORSMiddleware` leaves the API's authenticator for guards on the host's own routes.
AUTHENTICATOR_KEY = "pb_headless.authenticator"


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
        """Authenticate the request as the API would and demand this guard's scope; raises `ApiError`.

        The endpoint then finds `request.state.token`, `.user`, `.principal` and `.database`."""
        authenticator = find_authenticator(request)
        authentication = await within(authenticator.timeout, authenticator.authenticate(request.headers))
        principal = authentication.principal
        self.check(principal)
        request.state.token, request.state.user = principal.token, principal.user
        request.state.principal, request.state.database = principal, authenticator.database
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
                if is_async_callable(endpoint):
                    response = await endpoint(request)
                else:  # as Starlette does for a plain function: keep blocking work off the event loop
                    # (a partial or wrapper around a coroutine function returns an awaitable)
                    response = await maybe_await(await run_in_threadpool(endpoint, request))
            except ApiError as error:
                return error_response(error)
            if not isinstance(response, Response):  # Starlette itself would fail later, less clearly
                raise TypeError(
                    f"{endpoint!r}, guarded by {self!r}, returned {type(response).__name__}: "
                    "a host endpoint returns a Starlette Response"
                )
            return response

        # Marks the endpoint as guarded, for tools that list a host's routes and what they demand.
        setattr(guarded, "__pb_guard__", self)  # noqa: B010 - an attribute functools.wraps' type lacks
        return guarded


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


def find_authenticator(request: Request) -> Authenticator:
    """The authenticator of the API serving this host: left in the scope by `CORSMiddleware`, or found
    on `app.state.pb_headless` (the host's `HeadlessAPI`)."""
    authenticator = request.scope.get(AUTHENTICATOR_KEY)
    if authenticator is None and "app" in request.scope:
        api = getattr(getattr(request.app, "state", None), "pb_headless", None)
        authenticator = getattr(api, "authenticator", None)
    if not isinstance(authenticator, Authenticator):
        raise RuntimeError(
            "ApiAuth outside the API needs the host wrapped in pb_headless.CORSMiddleware"
            "(app, api=...) or app.state.pb_headless = <HeadlessAPI>"
        )
    return authenticator
