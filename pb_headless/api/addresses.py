"""Which endpoint a path under the API addresses, before any handler runs (no I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pb_headless.custom_routes import RouteDef, RouteError

SERVICE_PATHS = frozenset({"/health", "/me", "/objects", "/openapi.json"})
BATCH_PATH = "/batch"  # docs/writes.md, "Atomic batches"
READ_METHODS = ("GET", "HEAD")

# Paths a custom route must not answer: the service endpoints and the whole /objects tree, probed
# with names and ids of every shape a converter could accept.
_GENERIC_PROBES = (
    *sorted(SERVICE_PATHS),
    BATCH_PATH,
    "/objects/x",
    "/objects/1",
    "/objects/x/1",
    "/objects/1/1",
    "/objects/x/x",
    "/objects/x-y/1.5",
    "/changes/x",
    "/changes/x/stream",
)

_PARAMETER = re.compile(r"\{[^}]*\}")


@dataclass(frozen=True, slots=True)
class Match:
    kind: str  # service | batch | collection | record | changes | stream | custom | none
    name: str = ""  # service path, or object name
    record_id: str = ""
    candidates: tuple[tuple[RouteDef, dict[str, Any]], ...] = ()  # custom routes and their path params

    @property
    def routes(self) -> tuple[RouteDef, ...]:
        return tuple(definition for definition, _ in self.candidates)


def match(path: str, custom: tuple[RouteDef, ...]) -> Match:
    if path in SERVICE_PATHS:
        return Match("service", path)
    if path == BATCH_PATH:
        return Match("batch", path)
    if path.startswith("/objects/"):
        parts = path[len("/objects/") :].split("/")
        if len(parts) == 1 and parts[0]:
            return Match("collection", parts[0])
        if len(parts) == 2 and all(parts):
            return Match("record", parts[0], parts[1])
        return Match("none")
    if path.startswith("/changes/"):  # docs/changes.md
        name, _, rest = path[len("/changes/") :].partition("/")
        if name and rest in ("", "stream") and not (rest == "" and path.endswith("/")):
            return Match("stream" if rest else "changes", name)
        return Match("none")
    candidates = tuple(
        (definition, params) for definition in custom if (params := definition.match(path)) is not None
    )
    return Match("custom", candidates=candidates) if candidates else Match("none")


def check_not_shadowing(custom: tuple[RouteDef, ...]) -> None:
    """A custom route may not take a path the generic endpoints serve, nor repeat another route."""
    for definition in custom:
        taken = next((probe for probe in _GENERIC_PROBES if definition.match(probe) is not None), None)
        if taken is None and (definition.path == "/objects" or definition.path.startswith("/objects/")):
            taken = "/objects/..."
        if taken is not None:
            generic = "/objects/..." if taken.startswith("/objects/") else taken
            raise RouteError(
                f"custom route {definition.describe()} would shadow the generic endpoint {generic} "
                "under /api/pb/v1; choose another path (the /objects and /changes trees and /health, /me, "
                "/objects, /openapi.json, /batch belong to the API)"
            )
    seen: dict[tuple[str, str], RouteDef] = {}
    for definition in custom:
        # `/reports/{y}` and `/reports/{year:int}` answer the same requests: the names do not matter.
        key = (definition.method, _PARAMETER.sub("{}", definition.template))
        if key in seen:
            raise RouteError(f"custom route {definition.describe()} repeats {seen[key].describe()}")
        seen[key] = definition
