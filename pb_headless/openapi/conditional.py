"""The OpenAPI parts of conditional requests and retries (docs/caching.md): the `ETag` an answer
carries, `If-None-Match` and its 304, `If-Match` and its 412, and `Idempotency-Key` on create.
Stated once as components (`conditional_components`); operations refer to them."""

from __future__ import annotations

from pb_headless.openapi.parts import Schema


def _ref(section: str, name: str) -> Schema:
    return {"$ref": f"#/components/{section}/{name}"}


ETAG: Schema = {
    "required": False,  # a write answer of a record the object does not serve has none
    "description": "A strong tag of this answer's body; send it back in `If-None-Match` (reads) or "
    "`If-Match` (update, delete).",
    "schema": {"type": "string"},
}
VARY: Schema = {
    "description": "`Authorization, X-API-Key` (and `Origin` where CORS applies): the answer is "
    "the token's own.",
    "schema": {"type": "string"},
}
REPLAYED: Schema = {
    "required": False,
    "description": "`true` when this is the kept answer of an earlier request with the same "
    "`Idempotency-Key`; nothing was written again.",
    "schema": {"type": "string", "enum": ["true"]},
}


def conditional_components() -> dict[str, dict[str, Schema]]:
    """The headers, parameters and the 304 answer that object operations refer to."""
    return {
        "headers": {"ETag": ETAG, "Vary": VARY, "Idempotent-Replayed": REPLAYED},
        "parameters": {
            "IfNoneMatch": _header(
                "If-None-Match",
                "Tags of copies the client holds (weak comparison; several comma-separated; `*`). When "
                "one is this answer's tag, the answer is 304 without a body.",
            ),
            "IfMatch": _header(
                "If-Match",
                "The record's tag as read (the `ETag` of its show answer without parameters), or `*`. "
                "Another tag, or a weak one, is a 412 and nothing is written.",
            ),
            "IdempotencyKey": {
                **_header(
                    "Idempotency-Key",
                    "1-255 visible ASCII characters chosen by the client (a UUID will do). The first "
                    "answer below 500 is kept for 24 hours per token and key; the same request again "
                    "gets it back with `Idempotent-Replayed: true`; another path or body with the key "
                    "is a 422 `idempotency_key_reused`; while the first still runs, a 409.",
                ),
                "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
            },
        },
        "responses": {
            "NotModified": {
                "description": "Not modified: `If-None-Match` holds the current tag. No body.",
                "headers": {"ETag": _ref("headers", "ETag"), "Vary": _ref("headers", "Vary")},
            }
        },
    }


def if_none_match() -> Schema:
    return _ref("parameters", "IfNoneMatch")


def if_match() -> Schema:
    return _ref("parameters", "IfMatch")


def idempotency_key() -> Schema:
    return _ref("parameters", "IdempotencyKey")


def not_modified() -> Schema:
    return _ref("responses", "NotModified")


def tagged(response: Schema) -> Schema:
    """`response` with the `ETag` and `Vary` headers of an object answer."""
    tags = {"ETag": _ref("headers", "ETag"), "Vary": _ref("headers", "Vary")}
    headers = {**response.get("headers", {}), **tags}
    return {**response, "headers": headers}


def _header(name: str, description: str) -> Schema:
    schema = {"type": "string"}
    return {"name": name, "in": "header", "required": False, "description": description, "schema": schema}
