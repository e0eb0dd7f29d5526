"""Who a request runs as: its token and, when the token names one, the host's acting user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pb_headless.scopes import has_required_scope
from pb_headless.tokens import TokenInfo


@dataclass(frozen=True, slots=True)
class Principal:
    """The token a request authenticated with, and the acting user the host's loader returned."""

    token: TokenInfo
    user: Any = None

    def has_scope(self, required: str) -> bool:
        scopes = self.token.scopes
        if required in scopes or "*" in scopes:  # the usual grants, without a look at each scope
            return True
        return has_required_scope(scopes, required)


def user_reference(user_id: str | None, user: Any) -> dict[str, Any] | None:
    """`{"id", "username"}` of an acting user, whether the host's loader returns a mapping or an object."""
    if user_id is None:
        return None
    if user is None:
        return {"id": user_id, "username": None}
    if isinstance(user, Mapping):
        return {"id": user.get("id", user_id), "username": user.get("username")}
    return {"id": getattr(user, "id", user_id), "username": getattr(user, "username", None)}
