"""The parts every document shares: security schemes, the error envelope, rate-limit headers, list meta.

Error answers are built from `pb_headless.errors`, the one table of statuses and codes (docs/errors.md),
so a code can only be documented the way the API answers it.
"""

from __future__ import annotations

from pb_headless.errors import (
    ApiError,
    BadRequest,
    CursorExpired,
    Forbidden,
    IdempotencyInProgress,
    IdempotencyKeyReused,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    Unauthorized,
    UnknownObject,
    UnsupportedMediaType,
    ValidationFailed,
)
from pb_headless.openapi.conditional import conditional_components
from pb_headless.openapi.parts import Schema

BEARER, API_KEY = "bearerAuth", "apiKeyAuth"
SECURITY_SCHEMES = {
    BEARER: {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "pb_ token",
        "description": "`Authorization: Bearer <token>`; tokens are issued in the administration area.",
    },
    API_KEY: {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "The same token in `X-API-Key`, for clients behind a proxy that strips "
        "`Authorization`. Sending both with different values is a 400.",
    },
}
RATE_HEADERS = {  # on every answer, 4xx and 5xx included
    "X-RateLimit-Limit": "Requests allowed per window (a sliding minute).",
    "X-RateLimit-Remaining": "Requests left in the current window.",
    "X-RateLimit-Reset": "Unix time (seconds) when the window frees up.",
}


def security(scope: str | None) -> list[dict[str, list[str]]]:
    """Either scheme carries the token; the scope it must cover is listed as the requirement's role."""
    roles = [scope] if scope else []
    return [{BEARER: roles}, {API_KEY: roles}]


def ref(section: str, name: str) -> Schema:
    return {"$ref": f"#/components/{section}/{name}"}


def rate_headers() -> dict[str, Schema]:
    return {name: ref("headers", name) for name in RATE_HEADERS}


def json_content(schema: Schema) -> dict[str, Schema]:
    return {"application/json": {"schema": schema}}


# The error answers an operation may document, by component name: (the error classes, description).
ERRORS: dict[str, tuple[tuple[type[ApiError], ...], str]] = {
    "BadRequest": (
        (BadRequest,),
        "Malformed request: bad JSON, two different tokens in the headers, or, with "
        "`Prefer: handling=strict`, a parameter that would be ignored (`details.ignored`).",
    ),
    "Unauthorized": ((Unauthorized,), "The token is missing, unknown, disabled, expired or reissued."),
    "Forbidden": ((Forbidden,), "The token reaches the object but lacks the scope this operation needs."),
    "NotFound": (
        (NotFound, UnknownObject),
        "No such record (`not_found`), or no such object for this token (`unknown_object`).",
    ),
    "UnknownObject": ((UnknownObject,), "No such object for this token."),
    "PayloadTooLarge": ((PayloadTooLarge,), "The body is larger than 1 MiB."),
    "UnsupportedMediaType": ((UnsupportedMediaType,), "The body is not sent as JSON."),
    "ValidationFailed": (
        (ValidationFailed,),
        "A value is invalid; `details` lists the messages per field (or per query parameter, as written).",
    ),
    "CreateRefused": (
        (ValidationFailed, IdempotencyKeyReused),
        "A value is invalid (`validation_failed`, `details` per field), or the `Idempotency-Key` was "
        "used for another request (`idempotency_key_reused`).",
    ),
    "PreconditionFailed": ((PreconditionFailed,), "`If-Match` names no current tag of the record."),
    "IdempotencyInProgress": (
        (IdempotencyInProgress,),
        "A request with this `Idempotency-Key` is still running; retry after `Retry-After` s.",
    ),
    "RateLimited": ((RateLimited,), "Too many requests from this address; retry after `Retry-After` s."),
    "CursorExpired": ((CursorExpired,), "The change log no longer reaches back to the cursor: sync in full."),
    "StreamsFull": (
        (ServiceUnavailable,),
        "This server has as many streams open as it serves; retry after `Retry-After` s (docs/changes.md).",
    ),
    "ServerError": ((ServerError,), "An unexpected failure; the message names a request id for the logs."),
}
_EXTRA_HEADERS: dict[str, dict[str, Schema]] = {
    "Unauthorized": {"WWW-Authenticate": {"required": True, "schema": {"type": "string"}}},
    "IdempotencyInProgress": {
        "Retry-After": {"required": True, "description": "Seconds to wait.", "schema": {"type": "integer"}}
    },
    "RateLimited": {
        "Retry-After": {
            "required": True,
            "description": "Seconds to wait.",
            "schema": {"type": "integer", "minimum": 0},
        }
    },
    "StreamsFull": {
        "Retry-After": {"required": True, "description": "Seconds to wait.", "schema": {"type": "integer"}}
    },
}


def status_of(name: str) -> str:
    return str(ERRORS[name][0][0].status_code)


def _error_response(name: str) -> Schema:
    classes, description = ERRORS[name]
    codes = " or ".join(f"`{cls.code}`" for cls in classes)
    # Every answer carries the rate-limit headers. Only 429 lists them (the API's description says the
    # rest): listed on every answer they were a tenth of the document, repeated (docs/openapi.md).
    headers = {**(rate_headers() if name == "RateLimited" else {}), **_EXTRA_HEADERS.get(name, {})}
    # One schema for every error answer, so a generated client has one error type to decode.
    return {
        "description": f"{description} `error`: {codes}.",
        **({"headers": headers} if headers else {}),
        "content": json_content(ref("schemas", "Error")),
    }


def shared_components() -> dict[str, dict[str, Schema]]:
    """The `components` every document carries, whatever the token may call."""
    conditional = conditional_components()
    return {
        "schemas": {
            "Error": ERROR_ENVELOPE,
            "ListMeta": _LIST_META,
            "ListLinks": _LIST_LINKS,
        },
        "responses": {**{name: _error_response(name) for name in ERRORS}, **conditional["responses"]},
        "parameters": {"Prefer": PREFER_PARAMETER, **conditional["parameters"]},
        "headers": {
            **{
                name: {"required": True, "description": text, "schema": {"type": "integer"}}
                for name, text in RATE_HEADERS.items()
            },
            **conditional["headers"],
        },
        "securitySchemes": SECURITY_SCHEMES,
    }


# `Prefer: handling=strict` on list and show (docs/query.md, "Strict handling"). A plain string, not an
# enum: other preferences may share the header, and a value the API does not know is no preference.
PREFER_PARAMETER: Schema = {
    "name": "Prefer",
    "in": "header",
    "description": "`handling=strict`: a parameter that would be ignored (named in `meta.ignored`) is a "
    "400 naming each one in `details.ignored` instead; `handling=lenient` is the default. Other values "
    "change nothing. The answer says which applied in `Preference-Applied`.",
    "schema": {"type": "string"},
}


# The error envelope of every failed request, with every member an answer may add. `error` is a
# string, not an enum: a client generated today must still decode a code a later release adds.
ERROR_ENVELOPE: Schema = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "description": "The code; each error answer names the codes it has."},
        "message": {"type": "string", "description": "For a person to read; its words may change."},
        "details": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "description": "`validation_failed`: the messages per field, or per query parameter as "
            "written; `bad_request` under `Prefer: handling=strict`: `ignored`, the items it would drop.",
        },
        "required_scope": {"type": "string", "description": "`forbidden`: the scope the operation needs."},
        "request_id": {"type": "string", "description": "`server_error`: the id the site's logs carry."},
    },
    "description": "The error envelope of every failed request.",
}


def error_responses(*names: str) -> dict[str, Schema]:
    """`responses` entries for the named error answers, keyed by status."""
    return {status_of(name): ref("responses", name) for name in names}


_LIST_META: Schema = {
    "type": "object",
    "required": ["total", "count", "limit", "offset", "has_more", "next_cursor", "prev_cursor"],
    "properties": {
        "total": {
            "type": ["integer", "null"],
            "minimum": 0,
            "description": "Records matching the filters; null with `count=none`.",
        },
        "total_estimated": {
            "type": "boolean",
            "description": "Present (true) when `total` is the database's estimate (`count=estimated`).",
        },
        "count": {"type": "integer", "minimum": 0, "description": "Records in this page."},
        "limit": {"type": "integer", "minimum": 0, "description": "The effective page size."},
        "offset": {
            "type": ["integer", "null"],
            "minimum": 0,
            "description": "The effective offset; null on a page read by cursor.",
        },
        "has_more": {"type": "boolean", "description": "Whether more records follow this page."},
        "next_cursor": {
            "type": ["string", "null"],
            "description": "Send as `after` for the next page; null on the last page.",
        },
        "prev_cursor": {
            "type": ["string", "null"],
            "description": "Send as `before` for the previous page; null on the first page.",
        },
        "ignored": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Parameters dropped as written (`filter[secret]`, `sort=-secret`, an unknown "
            "`limt=1`); present only when something was dropped.",
        },
        "truncated": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {}},
            "description": "Per to-many relation that shows only its first records, the keys of the "
            "records it was cut on; present only then.",
        },
    },
}
# Absolute URLs that keep every other parameter as sent; not `format: uri`, whose RFC 3986 reading
# refuses the readable `filter[price][gte]` brackets that browsers and servers take as they are.
_LIST_LINKS: Schema = {
    "type": "object",
    "required": ["self", "next", "prev"],
    "properties": {
        "self": {"type": "string", "description": "The absolute address of this page."},
        "next": {"type": ["string", "null"], "description": "The next page; null on the last page."},
        "prev": {"type": ["string", "null"], "description": "The previous page; null on the first."},
    },
}
