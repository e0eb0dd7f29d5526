"""The API tokens section: list, create, edit, reissue, enable/disable and delete tokens.

Create and Reissue follow post/redirect/get: the POST answers 303 to a reveal page that shows the
new value once (see `reveal.py`), so a reload or Back never creates or reissues again. Scopes are
ticked from what is published or typed; every malformed one is reported at once, and one that
reaches nothing published is saved with a warning.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pb_headless.admin import reveal
from pb_headless.admin.access import form_of, text
from pb_headless.admin.reach import token_reach
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer, flash
from pb_headless.admin.scope_choices import (
    ObjectScopes,
    check_scopes,
    invalid_message,
    split_scopes,
    unreaching_message,
)
from pb_headless.auth import user_reference
from pb_headless.tokens import TokenError, TokenInfo

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

ListUsers = Callable[[], Awaitable[Iterable[tuple[Any, str]]] | Iterable[tuple[Any, str]]]
ACTIONS = {"reissue": "reissued", "enable": "enabled", "disable": "disabled", "delete": "deleted"}
FIELDS = ("name", "scopes", "expires_at", "user_id")


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
            Route("/tokens/reveal", guard(self.reveal), methods=["GET"]),
            Route("/tokens/edit", guard(self.edit), methods=["GET", "POST"]),
            Route("/tokens/action", guard(self.action), methods=["POST"]),
        ]

    # -- pages ---------------------------------------------------------------------------------
    async def index(
        self, request: Request, *, error: str | None = None, values: dict[str, Any] | None = None
    ) -> Response:
        rows = [(token, await self._user_label(token.user_id)) for token in await self.tokens.list()]
        objects, _ = await self._published()
        catalog = (await self.api.snapshot()).catalog
        context = {
            "rows": rows,
            "reaches": {token.name: token_reach(token, catalog) for token, _ in rows},
            "error": error,
            "values": values or {"ticked": [], "scopes": ""},
            "objects": objects,
            "users": await self._users(),
            "now": datetime.now(UTC),
        }
        return self.renderer.page(request, "tokens.html", context, 422 if error else 200)

    async def create(self, request: Request) -> Response:
        form = form_of(request)
        values = self._values(form)
        scopes, problem, warning = await self._checked_scopes(values)
        try:
            if problem:
                raise TokenError(problem)
            user_id = await self._checked_user(values["user_id"])
            token, plain = await self.tokens.create(
                values["name"], scopes, expires_at=values["expires_at"] or None, user_id=user_id
            )
        except TokenError as error:
            return await self.index(request, error=_sentence(error), values=values)
        return self._to_reveal(request, token, plain, reissued=False, warnings=warning)

    async def reveal(self, request: Request) -> Response:
        shown = reveal.take(request)
        name = shown.name if shown else request.query_params.get("name", "")
        token = await self._find(name)
        context = {
            "shown": shown,
            "name": name,
            "token": token,
            "api": self.api.origin(request) + self.api.prefix,
        }
        return self.renderer.page(request, "token_value.html", context, 200 if shown else 410)

    async def edit(self, request: Request) -> Response:
        name = request.query_params.get("name", "")
        token = await self._find(name)
        if token is None:
            return self.renderer.error(request, 404, "Not found", f"There is no token named '{name}'.")
        objects, _ = await self._published()
        values = self._stored_values(token, objects)
        error = None
        if request.method == "POST":
            values = self._values(form_of(request))
            scopes, problem, warning = await self._checked_scopes(values)
            try:
                if problem:
                    raise TokenError(problem)
                await self._update(token, scopes, values)
            except TokenError as refused:
                error = _sentence(refused)
            else:
                flash(request, " ".join([f"Token “{name}” saved.", *warning]), "warning" if warning else "ok")
                return self._back(request)
        context = {
            "token": token,
            "values": values,
            "error": error,
            "objects": objects,
            "users": await self._users(),
        }
        return self.renderer.page(request, "token_edit.html", context, 422 if error else 200)

    async def action(self, request: Request) -> Response:
        form = form_of(request)
        name, action = text(form, "name"), text(form, "action")
        if action not in ACTIONS:
            return self.renderer.error(request, 400, "Bad request", "Unknown action.")
        try:
            if action == "reissue":
                token, plain = await self.tokens.reissue(name)
                return self._to_reveal(request, token, plain, reissued=True, warnings=())
            await getattr(self.tokens, action)(name)
        except TokenError as error:
            flash(request, _sentence(error), "error")
            return self._back(request)
        flash(request, f"Token “{name}” {ACTIONS[action]}.")
        return self._back(request)

    # -- parts ---------------------------------------------------------------------------------
    @staticmethod
    def _values(form: FormData) -> dict[str, Any]:
        values: dict[str, Any] = {key: text(form, key) for key in FIELDS}
        values["ticked"] = [item for item in form.getlist("scope") if isinstance(item, str)]
        return values

    @staticmethod
    def _stored_values(token: TokenInfo, objects: list[ObjectScopes]) -> dict[str, Any]:
        offered = {"*"} | {
            scope for item in objects for scope in (item.read, item.write, item.group) if scope
        }
        return {
            "ticked": [scope for scope in token.scopes if scope in offered],
            "scopes": ", ".join(scope for scope in token.scopes if scope not in offered),
            "expires_at": as_input(token.expires_at),
            "user_id": token.user_id or "",
        }

    async def _published(self) -> tuple[list[ObjectScopes], list[str]]:
        """The published objects' scope choices and every scope something published asks for."""
        catalog = (await self.api.snapshot()).catalog
        objects = [
            ObjectScopes(name, spec.read_scope, spec.write_scope) for name, spec in sorted(catalog.items())
        ]
        required = [scope for item in objects for scope in (item.read, item.write)]
        required += [route.guard.scope for route in self.api.routes if route.guard.scope]
        return objects, required

    async def _checked_scopes(
        self, values: dict[str, Any]
    ) -> tuple[tuple[str, ...], str | None, tuple[str, ...]]:
        """The scopes, a refusal naming every malformed one, and a warning for those reaching nothing."""
        _, required = await self._published()
        check = check_scopes(split_scopes(values["ticked"], values["scopes"]), required)
        if not check.scopes:
            return check.scopes, "Choose at least one scope.", ()
        if check.invalid:
            return check.scopes, invalid_message(check.invalid), ()
        unreaching = tuple(scope for scope in check.unreaching if scope != "*")
        return check.scopes, None, (unreaching_message(unreaching),) if unreaching else ()

    async def _update(self, token: TokenInfo, scopes: tuple[str, ...], values: dict[str, Any]) -> None:
        expiry_unchanged = values["expires_at"] == as_input(token.expires_at)
        user_changed = values["user_id"] != (token.user_id or "")
        await self.tokens.update(
            token.name,
            scopes=scopes,
            expires_at=None if expiry_unchanged else values["expires_at"] or None,
            clear_expiry=not values["expires_at"],
            user_id=await self._checked_user(values["user_id"]) if user_changed else None,
            clear_user=not values["user_id"],
        )

    def _to_reveal(
        self, request: Request, token: TokenInfo, plain: str, *, reissued: bool, warnings: tuple[str, ...]
    ) -> Response:
        query = reveal.remember(request, token.name, plain, reissued=reissued, warnings=warnings)
        root = request.scope.get("root_path", "").rstrip("/")
        return RedirectResponse(f"{root}/tokens/reveal?{query}", status_code=303, headers=PAGE_HEADERS)

    def _back(self, request: Request) -> Response:
        return RedirectResponse(
            request.scope.get("root_path", "").rstrip("/") + "/tokens", status_code=303, headers=PAGE_HEADERS
        )

    async def _find(self, name: str) -> TokenInfo | None:
        try:
            return await self.tokens.get(name)
        except TokenError:
            return None

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


def _sentence(error: Exception) -> str:
    """A store's one-line refusal as a sentence for people: capital first letter, full stop."""
    message = str(error).strip()
    message = message[:1].upper() + message[1:]
    return message if message.endswith((".", "!", "?")) else message + "."
