"""The API tokens section: list, create, edit, reissue, enable/disable and delete tokens.

A plain value is rendered in the answer to the POST that made it (create or reissue) and nowhere
else: it is never put in the session or a redirect, so reloading the list never shows it again.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pb_headless.admin.access import form_of, text
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer, flash
from pb_headless.auth import user_reference
from pb_headless.tokens import TokenError, TokenInfo

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

ListUsers = Callable[[], Awaitable[Iterable[tuple[Any, str]]] | Iterable[tuple[Any, str]]]
ACTIONS = ("reissue", "enable", "disable", "delete")


def as_input(value: datetime | None) -> str:
    """A stored expiry as a `datetime-local` value, read back as UTC."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M") if value else ""


class TokenSection:
    """Pages under `/tokens`; every one is wrapped by `Access.page` in `AdminApp`."""

    def __init__(self, api: HeadlessAPI, renderer: Renderer, list_users: ListUsers | None = None) -> None:
        self.api = api
        self.tokens = api.tokens
        self.renderer = renderer
        self.list_users = list_users

    def routes(self, guard: Callable[[Any], Any]) -> list[Route]:
        return [
            Route("/tokens", guard(self.index), methods=["GET"]),
            Route("/tokens", guard(self.create), methods=["POST"]),
            Route("/tokens/edit", guard(self.edit), methods=["GET", "POST"]),
            Route("/tokens/action", guard(self.action), methods=["POST"]),
        ]

    # -- pages ---------------------------------------------------------------------------------
    async def index(
        self,
        request: Request,
        *,
        error: str | None = None,
        values: dict[str, str] | None = None,
        status_code: int = 200,
    ) -> Response:
        rows = [(token, await self._user_label(token.user_id)) for token in await self.tokens.list()]
        return self.renderer.page(
            request,
            "tokens.html",
            {
                "rows": rows,
                "error": error,
                "values": values or {"scopes": ""},
                "users": await self._users(),
                "now": datetime.now(UTC),
            },
            status_code,
        )

    async def create(self, request: Request) -> Response:
        form = form_of(request)
        values = {key: text(form, key) for key in ("name", "scopes", "expires_at", "user_id")}
        try:
            user_id = await self._checked_user(values["user_id"])
            token, plain = await self.tokens.create(
                values["name"], values["scopes"], expires_at=values["expires_at"] or None, user_id=user_id
            )
        except TokenError as error:
            return await self.index(request, error=str(error), values=values, status_code=422)
        return self._show_value(request, token, plain, reissued=False)

    async def edit(self, request: Request) -> Response:
        name = request.query_params.get("name", "")
        try:
            token = await self.tokens.get(name)
        except TokenError:
            return self.renderer.error(request, 404, "Not found", f"There is no token named '{name}'.")
        values = {
            "scopes": ", ".join(token.scopes),
            "expires_at": as_input(token.expires_at),
            "user_id": token.user_id or "",
        }
        error = None
        if request.method == "POST":
            values = {key: text(form_of(request), key) for key in values}
            try:
                await self._update(token, values)
            except TokenError as refused:
                error = str(refused)
            else:
                flash(request, f"Token '{name}' saved.")
                return self._back(request)
        return self.renderer.page(
            request,
            "token_edit.html",
            {
                "token": token,
                "values": values,
                "error": error,
                "users": await self._users(),
            },
            422 if error else 200,
        )

    async def action(self, request: Request) -> Response:
        form = form_of(request)
        name, action = text(form, "name"), text(form, "action")
        if action not in ACTIONS:
            return self.renderer.error(request, 400, "Bad request", "Unknown action.")
        try:
            if action == "reissue":
                token, plain = await self.tokens.reissue(name)
                return self._show_value(request, token, plain, reissued=True)
            if action == "delete":
                await self.tokens.delete(name)
            else:
                await getattr(self.tokens, action)(name)
        except TokenError as error:
            flash(request, str(error))
            return self._back(request)
        flash(request, f"Token '{name}' {action}d.")
        return self._back(request)

    # -- parts ---------------------------------------------------------------------------------
    async def _update(self, token: TokenInfo, values: dict[str, str]) -> None:
        expiry_unchanged = values["expires_at"] == as_input(token.expires_at)
        user_id = (
            await self._checked_user(values["user_id"])
            if values["user_id"] != (token.user_id or "")
            else None
        )
        await self.tokens.update(
            token.name,
            scopes=values["scopes"],
            expires_at=None if expiry_unchanged else values["expires_at"] or None,
            clear_expiry=not values["expires_at"],
            user_id=user_id,
            clear_user=not values["user_id"],
        )

    def _show_value(self, request: Request, token: TokenInfo, plain: str, *, reissued: bool) -> Response:
        return self.renderer.page(
            request,
            "token_value.html",
            {
                "token": token,
                "plain": plain,
                "reissued": reissued,
                "api": self.api.origin(request) + self.api.prefix,
            },
        )

    def _back(self, request: Request) -> Response:
        return RedirectResponse(
            request.scope.get("root_path", "").rstrip("/") + "/tokens", status_code=303, headers=PAGE_HEADERS
        )

    async def _checked_user(self, user_id: str) -> str | None:
        """An acting user must exist and not be blocked, when the host can tell."""
        if not user_id:
            return None
        if self.api.user_loader is not None and await self._load_user(user_id) is None:
            raise TokenError(f"there is no active administration user with id '{user_id}'")
        return user_id

    async def _load_user(self, user_id: str) -> Any:
        assert self.api.user_loader is not None
        user = self.api.user_loader(user_id)
        return await user if inspect.isawaitable(user) else user

    async def _user_label(self, user_id: str | None) -> str:
        if user_id is None:
            return ""
        user = await self._load_user(user_id) if self.api.user_loader is not None else None
        reference = user_reference(user_id, user) or {}
        if self.api.user_loader is not None and user is None:
            return f"#{user_id} (blocked or deleted)"
        return f"{reference.get('username')} (#{user_id})" if reference.get("username") else f"#{user_id}"

    async def _users(self) -> list[tuple[str, str]]:
        if self.list_users is None:
            return []
        users = self.list_users()
        if inspect.isawaitable(users):
            users = await users
        return [(str(user_id), label) for user_id, label in users]
