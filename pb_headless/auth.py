"""Authentication: reading the token from a request, the principal it yields, and the `ApiAuth` guard.

`ApiAuth` is the one guard: the generic endpoints, custom routes under the API and routes the host
defines elsewhere all call it, so every one of them answers 401 and 403 the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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

    Used on a host's own endpoint, it wraps it: `@ApiAuth("reports.read")`. The endpoint then finds
    the token in `request.state.token` and the acting user in `request.state.user`.
    """

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

    @property
    def spec(self) -> str:
        return f"ApiAuth:{self.scope}" if self.scope else "ApiAuth"

    def allows(self, principal: Principal) -> bool:
        return self.scope is None or principal.has_scope(self.scope)

    def check(self, principal: Principal) -> None:
        if self.scope is not None and not principal.has_scope(self.scope):
            raise Forbidden(self.scope)

    def __call__(self, endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """Guard a host endpoint that lives outside the API sub-application."""

        @functools.wraps(endpoint)
        async def guarded(request: Request) -> Response:
            api = find_api(request)
            try:
                principal = await api.authenticate(request)
                self.check(principal)
            except ApiError as error:
                return error_response(error)
            return await endpoint(request)

        guarded.__pb_guard__ = self  # type: ignore[attr-defined]
        return guarded


def find_api(request: Request) -> HeadlessAPI:
    """The HeadlessAPI serving this request: set by `CORSMiddleware` (wrapping the host) or the host's
    `app.state.pb_headless`."""
    api = request.scope.get(API_SCOPE_KEY)
    if api is None:
        api = getattr(getattr(request.app, "state", None), "pb_headless", None) if "app" in request.scope else None
    if api is None:
        raise RuntimeError("ApiAuth outside the API needs the host wrapped in pb_headless.CORSMiddleware(app, api=...) "
                           "or app.state.pb_headless = <HeadlessAPI>")
    return api
