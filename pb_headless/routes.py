"""Custom routes: `@route("GET", "/reports/summary", guard="ApiAuth:reports.read")`.

A declared route is served by `HeadlessAPI` next to the generic endpoints, behind the same checks:
rate limit, dormant API, token, then the route's guard.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from starlette.routing import compile_path

from pb_headless.auth import ApiAuth

Endpoint = Callable[..., Awaitable[Any]]
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
ROUTE_ATTRIBUTE = "__pb_route__"


@dataclass(frozen=True, eq=False)
class RouteDef:
    method: str
    path: str
    guard: ApiAuth
    endpoint: Endpoint
    summary: str
    regex: re.Pattern[str]
    param_names: tuple[str, ...]

    def match(self, path: str) -> dict[str, str] | None:
        found = self.regex.match(path)
        return found.groupdict() if found else None


def route(method: str, path: str, *, guard: str | ApiAuth = "ApiAuth", summary: str | None = None
          ) -> Callable[[Endpoint], Endpoint]:
    """Declare a custom route; the endpoint is `async def endpoint(request)` returning a dict or a Response."""
    method = method.upper()
    if method not in METHODS:
        raise ValueError(f"route {path!r}: method {method!r} is not one of {', '.join(sorted(METHODS))}")
    if not path.startswith("/"):
        raise ValueError(f"route {path!r}: the path starts with '/' and is relative to /api/pb/v1")
    checked_guard = ApiAuth.parse(guard)

    def declare(endpoint: Endpoint) -> Endpoint:
        regex, _, converters = compile_path(path.rstrip("/") or "/")
        doc = (endpoint.__doc__ or "").strip().splitlines()
        definition = RouteDef(method, path.rstrip("/") or "/", checked_guard, endpoint,
                              summary or (doc[0] if doc else endpoint.__name__), regex, tuple(converters))
        routes = [*getattr(endpoint, ROUTE_ATTRIBUTE, ()), definition]
        setattr(endpoint, ROUTE_ATTRIBUTE, tuple(routes))
        return endpoint

    return declare


def collect_routes(items: Iterable[Any]) -> list[RouteDef]:
    """Route definitions from endpoints, RouteDefs, modules, or paths of Python files."""
    found: list[RouteDef] = []
    for item in items:
        if isinstance(item, RouteDef):
            found.append(item)
        elif isinstance(item, str | Path):
            found += _from_module(load_routes_file(Path(item)))
        elif isinstance(item, ModuleType):
            found += _from_module(item)
        elif hasattr(item, ROUTE_ATTRIBUTE):
            found += list(getattr(item, ROUTE_ATTRIBUTE))
        else:
            raise TypeError(f"{item!r} is not a route: decorate it with @pb_headless.route(...)")
    return found


def load_routes_file(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"pb_headless_routes_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load routes from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _from_module(module: ModuleType) -> list[RouteDef]:
    found: list[RouteDef] = []
    for value in vars(module).values():
        found += list(getattr(value, ROUTE_ATTRIBUTE, ()))
    return found
