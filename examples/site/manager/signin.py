"""Signing in to the administration area: the session login, the logout, and the guard of every /mgr page."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from examples.site.logins import LoginThrottle, now_utc
from examples.site.rendering import ADMIN_HEADERS, Templates
from examples.site.sessions import SessionRecords
from examples.site.users import UserStore
from pb_headless.admin import is_valid_csrf, rotate_csrf_token

LOGIN_URL = "/mgr/login"
HOME_URL = "/mgr/"
SESSION_KEY = "admin_session"  # the random key of the server-side session record
WRONG = "Wrong username or password."
Endpoint = Callable[[Request], Awaitable[Response]]


def safe_next(target: str | None) -> str:
    """Only a path inside the administration area; anything else could send the user off-site."""
    if (
        target
        and (target == "/mgr" or target.startswith("/mgr/"))
        and "\\" not in target
        and "//" not in target
    ):
        return target
    return HOME_URL


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303, headers=ADMIN_HEADERS)


async def read_form(request: Request) -> FormData | None:
    try:
        return await request.form()
    except Exception:  # a malformed body is the client's fault, never a 500
        return None


class SignIn:
    """The login form, logout, `current_admin` (the guard the library's admin pages use too), `page`."""

    def __init__(
        self, users: UserStore, templates: Templates, client_ip: Callable[[Any], str] | None = None
    ) -> None:
        self.users = users
        self.templates = templates
        self.records = SessionRecords(users.database)
        self.throttle = LoginThrottle(users.database)
        # The client's address as the API sees it (trusted proxies' X-Forwarded-For included).
        self.client_ip = client_ip or (lambda scope: (scope.get("client") or ("unknown",))[0])

    def routes(self) -> list[Route]:
        return [
            Route("/mgr/login", self.login, methods=["GET", "POST"]),
            Route("/mgr/logout", self.page(self.logout), methods=["POST"]),
        ]

    async def current_admin(self, request: Request) -> dict[str, Any] | None:
        """The signed-in, unblocked administration user of a live session record, or None."""
        if "session" not in request.scope:
            return None
        user_id = await self.records.user_id(request.session.get(SESSION_KEY))
        return await self.users.active(user_id) if user_id is not None else None

    def page(self, endpoint: Endpoint) -> Endpoint:
        """Guard a /mgr page: no admin → the login page; a POST without the session's CSRF token → 403."""

        @functools.wraps(endpoint)
        async def guarded(request: Request) -> Response:
            admin = await self.current_admin(request)
            if admin is None:
                return redirect(f"{LOGIN_URL}?next={quote(request.url.path, safe='')}")
            request.state.admin = admin
            if request.method == "POST":
                form = await read_form(request)
                if form is None or not is_valid_csrf(request, form.get("csrf_token")):
                    return self.forbidden(request)
                request.state.form = form
            return await endpoint(request)

        return guarded

    def forbidden(self, request: Request) -> Response:
        return self.templates.page(request, "mgr/forbidden.html", status_code=403)

    async def login(self, request: Request) -> Response:
        target = safe_next(request.query_params.get("next"))
        if request.method == "GET":
            if await self.current_admin(request) is not None:
                return redirect(target)
            return self.templates.page(
                request, "mgr/login.html", {"next": target, "error": None, "username": ""}
            )
        form = await read_form(request)
        if form is None or not is_valid_csrf(request, form.get("csrf_token")):
            return self.forbidden(request)
        username, password = str(form.get("username") or "")[:200], str(form.get("password") or "")
        address = self.client_ip(request.scope)
        lock = await self.throttle.lock(username, address)
        if lock is not None:  # refused before the password is looked at, so guessing gains nothing
            error = f"Too many failed sign-ins. Try again in {lock.wait_text(now_utc())}."
            return self._login_page(request, target, error, username, 429)
        user = await self.users.authenticate(username, password)
        if user is None:
            await self.throttle.failed(username, address)
            return self._login_page(request, target, WRONG, username, 400)
        await self.throttle.succeeded(username)
        request.session.clear()  # nothing from before the login survives it
        request.session[SESSION_KEY] = await self.records.start(user["id"])
        rotate_csrf_token(request)
        return redirect(safe_next(str(form.get("next") or target)))

    def _login_page(self, request: Request, target: str, error: str, username: str, status: int) -> Response:
        context = {"next": target, "error": error, "username": username}
        return self.templates.page(request, "mgr/login.html", context, status)

    async def logout(self, request: Request) -> Response:
        await self.records.end(request.session.get(SESSION_KEY))  # a copy of the cookie is worthless now
        request.session.clear()
        return redirect(LOGIN_URL)
