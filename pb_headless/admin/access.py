"""Who may use the administration pages: the host's guard first, then a CSRF check on every POST."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from pb_headless.admin.csrf import FIELD, is_valid_csrf
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer

CurrentAdmin = Callable[[Request], Awaitable[Any] | Any]
Endpoint = Callable[[Request], Awaitable[Response]]


async def admin_of(current_admin: CurrentAdmin, request: Request) -> Any:
    """The host's guard, sync or async: the signed-in administration user, or None."""
    admin = current_admin(request)
    if inspect.isawaitable(admin):
        admin = await admin
    return admin


def login_redirect(login_url: str, request: Request) -> RedirectResponse:
    """Send the browser to the host's login page, asking it to come back here afterwards."""
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    separator = "&" if "?" in login_url else "?"
    return RedirectResponse(
        f"{login_url}{separator}next={quote(here, safe='')}", status_code=303, headers=PAGE_HEADERS
    )


class Access:
    """Wraps each page: no admin → the host's login page (or 401); a POST without a valid CSRF token → 403."""

    def __init__(self, current_admin: CurrentAdmin, login_url: str | None, renderer: Renderer) -> None:
        self.current_admin = current_admin
        self.login_url = login_url
        self.renderer = renderer

    def refuse(self, request: Request) -> Response:
        if self.login_url is None:
            return HTMLResponse(
                "<!doctype html><title>Sign in required</title>"
                "<p>Sign in to the administration area first.</p>",
                status_code=401,
                headers=PAGE_HEADERS,
            )
        return login_redirect(self.login_url, request)

    def page(self, endpoint: Endpoint) -> Endpoint:
        @functools.wraps(endpoint)
        async def guarded(request: Request) -> Response:
            admin = await admin_of(self.current_admin, request)
            if admin is None:
                return self.refuse(request)
            request.state.admin = admin
            if request.method == "POST":
                form = await read_form(request)
                if form is None:
                    return self.renderer.error(request, 400, "Bad request", "The form could not be read.")
                if not is_valid_csrf(request, form.get(FIELD)):
                    return self.renderer.error(
                        request,
                        403,
                        "Forbidden",
                        "The form's security token is missing or stale. Reload the page and try again.",
                    )
                request.state.form = form
            return await endpoint(request)

        return guarded


async def read_form(request: Request) -> FormData | None:
    """The posted form, or None when the body is not a readable form."""
    try:
        return await request.form()
    except Exception:  # a malformed multipart body is the client's fault, never a 500
        return None


def form_of(request: Request) -> FormData:
    """The form `Access.page` already read and checked."""
    form: FormData = request.state.form
    return form


def text(form: FormData, key: str) -> str:
    value = form.get(key)
    return value.strip() if isinstance(value, str) else ""
