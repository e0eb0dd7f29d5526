"""Custom routes: `@route("GET", "/reports/summary", guard="ApiAuth:reports.read")`.

A declared route is served by `HeadlessAPI` next to the generic endpoints, behind the same checks:
rate limit, dormant API, token, then the route's guard. Its path is relative to the API's prefix.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from starlette.convertors import Convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import compile_path

from pb_headless.auth.guard import ApiAuth
from pb_headless.http.calls import maybe_await
from pb_headless.http.responses import OBJECT_CACHING, json_response

Endpoint = Callable[..., Awaitable[Any]]
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
ROUTE_ATTRIBUTE = "__pb_route__"


class RouteError(ValueError):
    """A custom route cannot be served; the message names the route and its endpoint."""


@dataclass(frozen=True, eq=False)
class RouteDef:
    """One declared route: method, path (relative to the API), guard and endpoint."""

    method: str
    path: str  # as declared, e.g. "/reports/{year:int}"
    template: str  # the OpenAPI form, e.g. "/reports/{year}"
    guard: ApiAuth
    endpoint: Endpoint
    summary: str
    regex: re.Pattern[str]
    converters: Mapping[str, Convertor[Any]]

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(self.converters)

    def describe(self) -> str:
        return f"{self.method} {self.path} ({_qualified_name(self.endpoint)})"

    def match(self, path: str) -> dict[str, Any] | None:
        """The path parameters, converted (`{year:int}` gives an int), or None when the path differs."""
        found = self.regex.match(path)
        if found is None:
            return None
        return {name: self.converters[name].convert(value) for name, value in found.groupdict().items()}


def route(
    method: str, path: str, *, guard: str | ApiAuth | None = "ApiAuth", summary: str | None = None
) -> Callable[[Endpoint], Endpoint]:
    """Declare a custom route; the endpoint is `async def endpoint(request)` returning a dict or a Response.

    Decorators stack, so one endpoint may serve several methods or paths.
    """
    method = method.upper()
    if method not in METHODS:
        raise RouteError(f"route {path!r}: method {method!r} is not one of {', '.join(sorted(METHODS))}")
    if not path.startswith("/"):
        raise RouteError(f"route {path!r}: the path starts with '/' and is relative to /api/pb/v1")
    if path.startswith("/api/pb/"):
        raise RouteError(f"route {path!r}: write the path relative to /api/pb/v1 (e.g. '/reports/summary')")
    try:
        checked_guard = ApiAuth.parse(guard)
        regex, template, converters = compile_path(path.rstrip("/") or "/")
    except (AssertionError, ValueError) as error:  # starlette asserts on an unknown converter
        raise RouteError(f"route {method} {path}: {error}") from None

    def declare(endpoint: Endpoint) -> Endpoint:
        if not callable(endpoint):
            raise RouteError(f"route {method} {path}: {endpoint!r} is not callable")
        doc = (endpoint.__doc__ or "").strip().splitlines()
        definition = RouteDef(
            method,
            path.rstrip("/") or "/",
            template,
            checked_guard,
            endpoint,
            summary or (doc[0] if doc else endpoint.__name__),
            regex,
            converters,
        )
        setattr(endpoint, ROUTE_ATTRIBUTE, (*routes_of(endpoint), definition))
        return endpoint

    return declare


def routes_of(value: Any) -> tuple[RouteDef, ...]:
    """The routes declared on an endpoint with `@route`, or nothing."""
    try:
        declared = getattr(value, ROUTE_ATTRIBUTE, ())
    except Exception:  # objects with a permissive __getattr__ are not endpoints
        return ()
    return tuple(d for d in declared if isinstance(d, RouteDef)) if isinstance(declared, tuple) else ()


def collect_routes(items: Iterable[Any]) -> list[RouteDef]:
    """Route definitions from endpoints, RouteDefs, modules, or paths of Python files (each route once)."""
    found: dict[int, RouteDef] = {}
    files: set[Path] = set()
    for item in items:
        if isinstance(item, RouteDef):
            definitions: Iterable[RouteDef] = (item,)
        elif isinstance(item, str | Path):
            path = Path(item).resolve()
            definitions = () if path in files else _from_module(load_routes_file(path))
            files.add(path)
        elif isinstance(item, ModuleType):
            definitions = _from_module(item)
        elif routes_of(item):
            definitions = routes_of(item)
        else:
            raise RouteError(f"{item!r} is not a route: decorate it with @pb_headless.route(...)")
        # A module that imports another module's endpoint would otherwise serve it twice.
        found.update((id(definition), definition) for definition in definitions)
    return list(found.values())


def load_routes_file(path: Path) -> ModuleType:
    """Import a routes file (the site's `core/App/routes.py`) by its path."""
    if not path.is_file():
        raise RouteError(f"{path}: no such routes file")
    name = "pb_headless_routes_" + re.sub(r"\W", "_", str(path.resolve()))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RouteError(f"{path}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing look a module up while it executes
    try:
        spec.loader.exec_module(module)
    except Exception:
        sys.modules.pop(name, None)
        raise
    return module


def _from_module(module: ModuleType) -> list[RouteDef]:
    return [definition for value in vars(module).values() for definition in routes_of(value)]


async def run_endpoint(definition: RouteDef, request: Request) -> Response:
    """Call the endpoint and turn what it returns into the answer."""
    return render_result(await maybe_await(definition.endpoint(request)), definition)


def render_result(result: Any, definition: RouteDef) -> Response:
    """A Response passes through; a dict or list becomes a 200 JSON answer; None an empty 204."""
    if isinstance(result, Response):
        return result
    if result is None:
        return Response(status_code=204)
    if not isinstance(result, dict | list):
        raise TypeError(
            f"custom route {definition.describe()} returned {type(result).__name__}; "
            "return a dict, a list, None or a Starlette Response"
        )
    return json_response(result, cache=OBJECT_CACHING)


def _qualified_name(endpoint: Any) -> str:
    name = getattr(endpoint, "__qualname__", None) or repr(endpoint)
    code = getattr(endpoint, "__code__", None)
    return f"{name} in {code.co_filename}" if code is not None else name
