"""The service endpoints' parts (docs/endpoints.md): health, me, objects and this document itself."""

from __future__ import annotations

from pb_headless.openapi.components import error_responses, json_content, security
from pb_headless.openapi.objects import OPERATION_ORDER
from pb_headless.openapi.parts import OperationPart, Schema, Tag

TAG = Tag("service", "Service endpoints: health, the token itself, the objects it reaches, this document.")
_STRING_LIST: Schema = {"type": "array", "items": {"type": "string"}}
_TOKEN_ERRORS = ("BadRequest", "Unauthorized", "RateLimited", "ServerError")


def service_operations() -> list[OperationPart]:
    return [_health(), _me(), _objects(), _openapi()]


def _ok(description: str, schema: Schema) -> Schema:
    return {"description": description, "content": json_content(schema)}


def _operation(path: str, operation_id: str, summary: str, response: Schema) -> OperationPart:
    body = {
        "tags": [TAG.name],
        "operationId": operation_id,
        "summary": summary,
        "security": security(None),
        "responses": {"200": response, **error_responses(*_TOKEN_ERRORS)},
    }
    return OperationPart(path, "get", None, body)


def _health() -> OperationPart:
    health = {
        "type": "object",
        "required": ["status", "database", "version"],
        "properties": {
            "status": {"type": "string", "enum": ["ok"]},
            "database": {"type": "string", "enum": ["ok"]},
            "version": {"type": "string"},
        },
    }
    down = {
        "type": "object",
        "required": ["error", "message", "status", "database", "version"],
        "properties": {
            "error": {"type": "string", "enum": ["service_unavailable"]},
            "message": {"type": "string"},
            "status": {"type": "string", "enum": ["unavailable"]},
            "database": {"type": "string", "enum": ["unavailable"]},
            "version": {"type": "string"},
        },
    }
    body = {
        "tags": [TAG.name],
        "operationId": "health",
        "summary": "Whether the API is alive",
        "description": "Needs no token.",
        "security": [],
        "responses": {
            "200": _ok("The API and its database answer.", health),
            "503": {"description": "The database does not answer.", "content": json_content(down)},
            **error_responses("RateLimited"),
        },
    }
    return OperationPart("/health", "get", None, body)


def _me() -> OperationPart:
    user = {
        "type": ["object", "null"],
        "required": ["id", "username"],
        "properties": {"id": {"type": ["string", "integer"]}, "username": {"type": ["string", "null"]}},
        "description": "The acting user the token names, or null.",
    }
    rate = {
        "type": "object",
        "required": ["limit", "remaining", "reset"],
        "properties": {
            "limit": {"type": "integer"},
            "remaining": {"type": "integer"},
            "reset": {"type": "integer"},
        },
    }
    data = {
        "type": "object",
        "required": ["name", "prefix", "scopes", "expires_at", "user", "objects", "rate_limit"],
        "properties": {
            "name": {"type": "string"},
            "prefix": {"type": "string", "description": "The token's first 8 characters."},
            "scopes": _STRING_LIST,
            "expires_at": {"type": ["string", "null"], "format": "date-time"},
            "user": user,
            "objects": _STRING_LIST,
            "rate_limit": rate,
        },
    }
    schema = {"type": "object", "required": ["data"], "properties": {"data": data}}
    return _operation(
        "/me",
        "me",
        "The token: its name, scopes, expiry, acting user and objects",
        _ok("The token sending this request.", schema),
    )


def _objects() -> OperationPart:
    described = {
        "type": "object",
        "required": ["name", "operations", "fields", "filterable", "sortable", "searchable", "with", "links"],
        "properties": {
            "name": {"type": "string"},
            "operations": {"type": "array", "items": {"type": "string", "enum": list(OPERATION_ORDER)}},
            "fields": _STRING_LIST,
            "filterable": _STRING_LIST,
            "sortable": _STRING_LIST,
            "searchable": _STRING_LIST,
            "with": _STRING_LIST,
            "links": {
                "type": "object",
                "required": ["self"],
                "properties": {"self": {"type": "string", "description": "Absolute URL."}},
            },
        },
    }
    schema = {
        "type": "object",
        "required": ["data"],
        "properties": {"data": {"type": "array", "items": described}},
    }
    return _operation(
        "/objects",
        "objects",
        "The objects this token reaches",
        _ok("Only the objects whose read or write scope the token carries.", schema),
    )


def _openapi() -> OperationPart:
    schema = {
        "type": "object",
        "required": ["openapi", "info", "paths"],
        "description": "An OpenAPI 3.1 document.",
    }
    return _operation(
        "/openapi.json",
        "openapi",
        "This document, trimmed to what the token may call",
        _ok("The OpenAPI document for this token.", schema),
    )
