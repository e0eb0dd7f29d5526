"""The object check every endpoint addressing an object makes first (docs/endpoints.md): the object
the token reaches (404 `unknown_object` otherwise, the same answer as for a name that does not
exist), then the scope the operation needs (403)."""

from __future__ import annotations

from collections.abc import Mapping

from pb_headless.api.service import reachable
from pb_headless.auth import Principal
from pb_headless.errors import Forbidden, UnknownObject
from pb_headless.http.responses import OBJECT_CACHING
from pb_headless.registry import ObjectSpec


def reached_object(catalog: Mapping[str, ObjectSpec], principal: Principal, name: str) -> ObjectSpec:
    """The object `name`, when the token carries its read or its write scope."""
    spec = catalog.get(name)
    if spec is None or not reachable((spec,), principal):
        raise UnknownObject(f"There is no object named '{name}'.", headers={"Cache-Control": OBJECT_CACHING})
    return spec


def require_scope(principal: Principal, scope: str) -> None:
    if not principal.has_scope(scope):
        raise Forbidden(scope)
