"""Custom routes' parts: each route's path, its path parameters and what its `ApiAuth` guard demands."""

from __future__ import annotations

import re
from collections.abc import Iterable

from starlette.convertors import Convertor, FloatConvertor, IntegerConvertor, PathConvertor, UUIDConvertor
from starlette.routing import compile_path

from pb_headless.custom_routes import RouteDef
from pb_headless.openapi.components import error_responses, json_content, security
from pb_headless.openapi.parts import OperationPart, Schema, Tag

TAG = Tag("custom", "The site's own routes, declared with `@route` and guarded by `ApiAuth`.")
_SEGMENT = "^[^/]+$"


def route_operations(routes: Iterable[RouteDef]) -> list[OperationPart]:
    parts: list[OperationPart] = []
    taken: set[str] = set()
    for definition in routes:
        parts.append(_part(definition, taken))
    return parts


def _part(definition: RouteDef, taken: set[str]) -> OperationPart:
    _, path, convertors = compile_path(definition.path)  # `/reports/{year:int}` → `/reports/{year}`
    operation_id = _unique(_operation_id(definition.method, path), taken)
    scope = definition.guard.scope
    # A path value its convertor does not match (`/reports/x` for `{year:int}`) addresses nothing: 404.
    errors = (
        "BadRequest",
        "Unauthorized",
        *(("Forbidden",) if scope else ()),
        *(("NotFound",) if convertors else ()),
        "RateLimited",
        "ServerError",
    )
    requirement = f"Requires the scope `{scope}`." if scope else "Any live token may call it."
    operation: Schema = {
        "tags": [TAG.name],
        "operationId": operation_id,
        "summary": definition.summary,
        "description": f"A custom route (`{definition.guard.spec}`). {requirement}",
        "security": security(scope),
        "responses": {
            "200": {"description": "The route's answer.", "content": json_content({})},
            **error_responses(*errors),
        },
    }
    if convertors:
        operation["parameters"] = [_path_parameter(name, convertor) for name, convertor in convertors.items()]
    return OperationPart(path, definition.method.lower(), scope, operation)


def _path_parameter(name: str, convertor: Convertor) -> Schema:
    schema: Schema
    if isinstance(convertor, IntegerConvertor):
        schema = {"type": "integer", "minimum": 0}
    elif isinstance(convertor, FloatConvertor):
        schema = {"type": "number", "minimum": 0}
    elif isinstance(convertor, UUIDConvertor):
        schema = {"type": "string", "format": "uuid"}
    elif isinstance(convertor, PathConvertor):
        schema = {"type": "string", "minLength": 1}
    else:
        schema = {"type": "string", "pattern": _SEGMENT}
    return {"name": name, "in": "path", "required": True, "schema": schema}


def _operation_id(method: str, path: str) -> str:
    # Object operations are `list_<name>`, `show_<name>`...; the `custom_` prefix keeps the two apart.
    words = re.sub(r"[^A-Za-z0-9]+", "_", path).strip("_") or "root"
    return f"custom_{method.lower()}_{words}"


def _unique(candidate: str, taken: set[str]) -> str:
    """`/a-b` and `/a_b` read the same once cleaned; the second gets a number."""
    chosen, number = candidate, 2
    while chosen in taken:
        chosen, number = f"{candidate}_{number}", number + 1
    taken.add(chosen)
    return chosen
