"""An object's change feed and stream in the OpenAPI document (docs/changes.md): both need its read scope."""

from __future__ import annotations

from pb_headless.changes.cursor import PATTERN
from pb_headless.openapi.components import error_responses, json_content, ref, security
from pb_headless.openapi.parameters import show_parameters
from pb_headless.openapi.parts import OperationPart, Schema
from pb_headless.openapi.values import record_value_schema
from pb_headless.query.grammar import LARGEST_NUMBER
from pb_headless.registry.spec import ObjectSpec

_ERRORS = ("BadRequest", "Unauthorized", "Forbidden", "UnknownObject", "ValidationFailed", "CursorExpired")
_CURSOR = "An opaque cursor this API gave: an entry's `cursor`, or `meta.next`."


def change_operations(spec: ObjectSpec) -> list[OperationPart]:
    return [_feed(spec), _stream(spec)]


def _entry(spec: ObjectSpec) -> Schema:
    return {
        "type": "object",
        "required": ["op", "id", "record", "cursor", "at"],
        "properties": {
            "op": {"type": "string", "enum": ["upsert", "delete"]},
            "id": record_value_schema(spec.pk),
            "record": {
                "oneOf": [ref("schemas", f"{spec.name}.Record"), {"type": "null"}],
                "description": "The record as show renders it; null for `delete`.",
            },
            "cursor": {**_CURSOR_SCHEMA, "description": _CURSOR},
            "at": {"type": "string", "format": "date-time", "description": "When the row changed (UTC)."},
        },
    }


_CURSOR_SCHEMA: Schema = {"type": "string", "pattern": PATTERN}


def _since(description: str) -> Schema:
    return {"name": "since", "in": "query", "description": description, "schema": _CURSOR_SCHEMA}


def _operation(spec: ObjectSpec, operation_id: str, summary: str, description: str) -> Schema:
    return {
        "tags": [spec.name],
        "operationId": operation_id,
        "summary": summary,
        "description": f"{description} Requires the scope `{spec.read_scope}`.",
        "security": security(spec.read_scope),
    }


def _feed(spec: ObjectSpec) -> OperationPart:
    page = {
        "type": "object",
        "required": ["data", "meta"],
        "properties": {
            "data": {"type": "array", "items": _entry(spec)},
            "meta": {
                "type": "object",
                "required": ["next", "has_more", "count"],
                "properties": {
                    "next": {**_CURSOR_SCHEMA, "description": "The cursor to resume from."},
                    "has_more": {"type": "boolean"},
                    "count": {"type": "integer", "minimum": 0},
                },
            },
        },
    }
    # As on lists: larger values count as the maximum, and one that is not a number is ignored.
    limit = {
        "anyOf": [{"type": "integer", "minimum": 0, "maximum": LARGEST_NUMBER}, {"type": "string"}],
        "default": spec.per_page,
    }
    body = {
        **_operation(
            spec,
            f"changes_{spec.name}",
            f"What changed in `{spec.name}` since a cursor",
            "One entry per row (its latest change), in commit order; deleted, unpublished or filtered-out "
            "rows come as `delete`. Without `since`: no entries, and `meta.next` is the cursor for now.",
        ),
        "parameters": [
            _since(f"Entries after this cursor. {_CURSOR}"),
            {
                "name": "limit",
                "in": "query",
                "description": f"Entries per answer, default {spec.per_page}; values above "
                f"{spec.max_per_page} count as {spec.max_per_page}.",
                "schema": limit,
            },
            *show_parameters(spec),
        ],
        "responses": {
            "200": {"description": "The entries after the cursor.", "content": json_content(page)},
            **error_responses(*_ERRORS, "RateLimited", "ServerError"),
        },
    }
    return OperationPart(f"/changes/{spec.name}", "get", spec.read_scope, body)


def _stream(spec: ObjectSpec) -> OperationPart:
    events = {
        "type": "string",
        "description": "Server-sent events: `event: upsert|delete`, `id: <cursor>`, `data: <entry as JSON>` "
        "(the entries of the feed); a comment line after 10 s of silence.",
    }
    body = {
        **_operation(
            spec,
            f"stream_{spec.name}",
            f"The changes of `{spec.name}`, live",
            "Resumes after `Last-Event-ID` (or `since`); with neither, from the moment it opens. At most 5 "
            "open streams per token and instance.",
        ),
        "parameters": [
            _since(f"Start after this cursor. {_CURSOR}"),
            {"name": "Last-Event-ID", "in": "header", "description": _CURSOR, "schema": _CURSOR_SCHEMA},
            *show_parameters(spec),
        ],
        "responses": {
            "200": {"description": "The stream.", "content": {"text/event-stream": {"schema": events}}},
            **error_responses(*_ERRORS, "RateLimited", "ServerError"),
        },
    }
    return OperationPart(f"/changes/{spec.name}/stream", "get", spec.read_scope, body)
