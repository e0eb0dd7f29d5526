"""Which endpoint a path under the API addresses, before any handler runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from pb_headless.routes import RouteDef

SERVICE_PATHS = frozenset({"/health", "/me", "/objects", "/openapi.json"})
READ_METHODS = ("GET", "HEAD")

# (path kind, HTTP method) → operation; HEAD is served as GET.
OPERATIONS = {
    ("collection", "GET"): "list", ("collection", "POST"): "create",
    ("record", "GET"): "show", ("record", "PATCH"): "update", ("record", "DELETE"): "delete",
}
METHODS_OF = {
    "collection": {"list": ("GET", "HEAD"), "create": ("POST",)},
    "record": {"show": ("GET", "HEAD"), "update": ("PATCH",), "delete": ("DELETE",)},
}


@dataclass(frozen=True, slots=True)
class Match:
    kind: str                      # service | collection | record | custom | none
    name: str = ""                 # service path, or object name
    record_id: str = ""
    routes: tuple[RouteDef, ...] = ()
    params: dict[str, str] = field(default_factory=dict)


def normalize(path: str) -> str:
    """A trailing slash addresses the same resource."""
    return path.rstrip("/") or "/"


def match(path: str, custom: tuple[RouteDef, ...]) -> Match:
    if path in SERVICE_PATHS:
        return Match("service", path)
    if path.startswith("/objects/"):
        parts = path[len("/objects/"):].split("/")
        if len(parts) == 1 and parts[0]:
            return Match("collection", parts[0])
        if len(parts) == 2 and all(parts):
            return Match("record", parts[0], parts[1])
        return Match("none")
    hits = [(definition, params) for definition in custom if (params := definition.match(path)) is not None]
    if hits:
        return Match("custom", routes=tuple(d for d, _ in hits), params=hits[0][1])
    return Match("none")


def check_not_shadowing(custom: tuple[RouteDef, ...]) -> None:
    """A custom route may not take a path the generic endpoints serve."""
    probes = [*SERVICE_PATHS, "/objects/x", "/objects/x/1"]
    for definition in custom:
        taken = [probe for probe in probes if definition.match(probe) is not None]
        if taken or definition.path == "/objects" or definition.path.startswith("/objects/"):
            raise ValueError(
                f"custom route {definition.method} {definition.path} ({definition.endpoint.__qualname__}) "
                f"would shadow the generic endpoint {taken[0] if taken else '/objects/...'}; choose another path")
    seen: set[tuple[str, str]] = set()
    for definition in custom:
        key = (definition.method, definition.path)
        if key in seen:
            raise ValueError(f"custom route {definition.method} {definition.path} is declared twice")
        seen.add(key)
