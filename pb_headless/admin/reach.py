"""Which tokens reach which published objects, as the pages say it, and the button that adds a scope.

A token without an object's read or write scope is told the object does not exist (404
`unknown_object`), so that a token cannot learn what lies beyond its reach. The owner who has just
published a table must not be left guessing: its API tab lists the tokens that reach it and offers
each other one its read scope in one click; the token list names the objects each token reaches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pb_headless.admin.access import form_of, text
from pb_headless.admin.rendering import PAGE_HEADERS, flash
from pb_headless.registry import ObjectSpec
from pb_headless.scopes import has_required_scope
from pb_headless.tokens import TokenError, TokenInfo

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI


@dataclass(frozen=True, slots=True)
class Reach:
    """What one token may do with one object: read, write, both, or neither (then it gets 404)."""

    token: TokenInfo
    reads: bool
    writes: bool

    @property
    def reaches(self) -> bool:
        return self.reads or self.writes

    @property
    def words(self) -> str:
        return "read and write" if self.reads and self.writes else "read" if self.reads else "write"


def object_reach(spec: ObjectSpec, tokens: Iterable[TokenInfo]) -> list[Reach]:
    """Every token with what it may do with `spec`, in the token list's order."""
    return [
        Reach(
            token,
            has_required_scope(token.scopes, spec.read_scope),
            has_required_scope(token.scopes, spec.write_scope),
        )
        for token in tokens
    ]


def token_reach(token: TokenInfo, catalog: Mapping[str, ObjectSpec]) -> list[tuple[str, str]]:
    """The published objects `token` reaches, by name, with what it may do with each."""
    reached = []
    for name in sorted(catalog):
        reach = object_reach(catalog[name], (token,))[0]
        if reach.reaches:
            reached.append((name, reach.words))
    return reached


class GrantScope:
    """`POST /tokens/grant`: add one scope to one token, from the API tab's offer, and go back there."""

    def __init__(self, api: HeadlessAPI) -> None:
        self.api = api

    def routes(self, guard: Callable[[Any], Any]) -> list[Route]:
        return [Route("/tokens/grant", guard(self.grant), methods=["POST"])]

    async def grant(self, request: Request) -> Response:
        form = form_of(request)
        name, scope = text(form, "name"), text(form, "scope")
        try:
            token = await self.api.tokens.get(name)
            if scope not in token.scopes:
                await self.api.tokens.update(name, scopes=(*token.scopes, scope))
        except TokenError as refused:
            flash(request, f"Nothing was changed: {refused}.", "error")
        else:
            flash(request, f"Token “{name}” now has the scope {scope}.")
        back = self._back(request, text(form, "back"))
        return RedirectResponse(back, status_code=303, headers=PAGE_HEADERS)

    @staticmethod
    def _back(request: Request, back: str) -> str:
        """The page the offer was on, within the admin area only (never another site)."""
        root = request.scope.get("root_path", "").rstrip("/")
        if back.startswith("/") and not back.startswith("//") and "\\" not in back:
            return root + back
        return root + "/tokens"
