"""An object's change feed and stream in the OpenAPI document (docs/changes.md): both need its read scope.

Kept small: what every object's feed shares (the cursor parameters, `meta`) is one component
(`changes.*`), what one object's feed and stream share (an entry) is another (`<object>.Change`), and
`fields`/`with`, the filters and `search` are the object's own parameter components, as show and the
list refer to them.
"""

from __future__ import annotations

from pb_headless.changes.cursor import PATTERN
from pb_headless.openapi.components import error_responses, json_content, ref, security
from pb_headless.openapi.filters import filter_schemas
from pb_headless.openapi.parameters import component_name, selection_parameters, show_parameters
from pb_headless.openapi.parts import OperationPart, Schema
from pb_headless.openapi.values import record_value_schema
from pb_headless.query.grammar import LARGEST_NUMBER
from pb_headless.registry.spec import ObjectSpec

_ERRORS = ("BadRequest", "Unauthorized", "Forbidden", "UnknownObject", "ValidationFailed", "CursorExpired")
_CURSOR: Schema = {"type": "string", "pattern": PATTERN}
_SHARED_PARAMETERS: dict[str, Schema] = {
    "changes.since": {
        "name": "since",
        "in": "query",
        "description": "Entries after this cursor (an entry's `cursor`, or `meta.next`), "
        "of the same filters and search.",
        "schema": _CURSOR,
    },
    "changes.limit": {
        "name": "limit",
        "in": "query",
        "description": "Entries per answer; default and maximum as the object's lists.",
        "schema": {
            "anyOf": [{"type": "integer", "minimum": 0, "maximum": LARGEST_NUMBER}, {"type": "string"}]
        },
    },
    "changes.Last-Event-ID": {"name": "Last-Event-ID", "in": "header", "schema": _CURSOR},
}
_META: Schema = {
    "type": "object",
    "required": ["next", "has_more", "count"],
    "properties": {
        "next": _CURSOR,
        "has_more": {"type": "boolean"},
        "count": {"type": "integer"},
        "ignored": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Parameters dropped as written (`fields=secret`, an unknown `limt=1`); present "
            "only when something was dropped.",
        },
    },
}


def change_operations(spec: ObjectSpec) -> list[OperationPart]:
    return [_feed(spec), _stream(spec)]


def _components(spec: ObjectSpec, names: tuple[str, ...]) -> dict[str, dict[str, Schema]]:
    own = {
        component_name(spec, parameter): parameter
        for parameter in (*selection_parameters(spec), *show_parameters(spec))
    }
    entry = {
        "type": "object",
        "required": ["op", "id", "record", "cursor", "at"],
        "properties": {
            "op": {"type": "string", "enum": ["upsert", "delete"]},
            "id": record_value_schema(spec.pk),
            "record": {"oneOf": [ref("schemas", f"{spec.name}.Record"), {"type": "null"}]},
            "cursor": _CURSOR,
            "at": {"type": "string", "format": "date-time"},
        },
    }
    return {
        "parameters": {name: {**_SHARED_PARAMETERS, **own}[name] for name in names},
        "schemas": {f"{spec.name}.Change": entry, "changes.Meta": _META, **filter_schemas(spec)},
    }


def _operation(
    spec: ObjectSpec,
    kind: str,
    summary: str,
    names: tuple[str, ...],
    ok: Schema,
    errors: tuple[str, ...] = (),
) -> Schema:
    return {
        "tags": [spec.name],
        "operationId": f"{kind}_{spec.name}",
        "summary": summary,
        "description": f"docs/changes.md. Requires the scope `{spec.read_scope}`.",
        "security": security(spec.read_scope),
        "parameters": [*(ref("parameters", name) for name in names), ref("parameters", "Prefer")],
        "responses": {"200": ok, **error_responses(*_ERRORS, "RateLimited", *errors, "ServerError")},
    }


def _shown(spec: ObjectSpec) -> tuple[str, ...]:
    """The filters, `search`, `fields` and `with`: the feed and the stream take them as a list does."""
    parameters = (*selection_parameters(spec), *show_parameters(spec))
    return tuple(component_name(spec, parameter) for parameter in parameters)


def _feed(spec: ObjectSpec) -> OperationPart:
    names = ("changes.since", "changes.limit", *_shown(spec))
    page = {
        "type": "object",
        "required": ["data", "meta"],
        "properties": {
            "data": {"type": "array", "items": ref("schemas", f"{spec.name}.Change")},
            "meta": ref("schemas", "changes.Meta"),
        },
    }
    ok = {"description": "One entry per changed row, in commit order.", "content": json_content(page)}
    body = _operation(spec, "changes", f"What changed in `{spec.name}` since a cursor", names, ok)
    path = f"/changes/{spec.name}"
    return OperationPart(path, "get", spec.read_scope, body, _components(spec, names))


def _stream(spec: ObjectSpec) -> OperationPart:
    names = ("changes.since", "changes.Last-Event-ID", *_shown(spec))
    events = {"type": "string", "description": f"Events: `{spec.name}.Change` entries as `data`."}
    ok = {"description": "Server-sent events.", "content": {"text/event-stream": {"schema": events}}}
    body = _operation(spec, "stream", f"The changes of `{spec.name}`, live", names, ok, ("StreamsFull",))
    path = f"/changes/{spec.name}/stream"
    return OperationPart(path, "get", spec.read_scope, body, _components(spec, names))
