"""`POST /batch` in the document: one operation schema per object and write operation, built once per
registry version; a token's document joins those it may call into the body's `oneOf`, and has no
`/batch` at all when it may write nothing (docs/writes.md, "Atomic batches").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pb_headless.openapi import conditional
from pb_headless.openapi.components import json_content, ref
from pb_headless.openapi.parts import OperationPart, Schema, Tag
from pb_headless.operations import MAX_BATCH_OPERATIONS as MAX_OPERATIONS
from pb_headless.operations import Operation
from pb_headless.registry.spec import INTEGER, ObjectSpec

PATH = "/batch"
SECTION = "batch"  # parts that are not paths of their own: the items of the one batch operation
TAG = Tag("batch", "Several creates, updates and deletes across objects in one transaction: all or none.")
_WRITES = (Operation.CREATE, Operation.UPDATE, Operation.DELETE)
_REF: Schema = {
    "type": "object",
    "required": ["$ref"],
    "additionalProperties": False,
    "properties": {"$ref": {"type": "string", "description": "The `label` of an earlier operation."}},
    "description": "The key of the record the earlier operation with this `label` wrote.",
}
_ERRORS = {  # the failing operation's own answer; the description lists what each status means
    "400": "Malformed JSON.",
    "401": "No valid token.",
    "403": "An operation needs a scope the token lacks.",
    "404": "An unknown object or record.",
    "405": "An operation the object does not allow.",
    "409": "The same Idempotency-Key is still running.",
    "412": "An `if_match` names no current tag.",
    "413": f"Over {MAX_OPERATIONS} operations, or over 1 MiB.",
    "415": "Not sent as JSON.",
    "422": "Invalid values, an unknown label, an empty list, or a reused Idempotency-Key.",
    "429": "Too many requests (one per operation).",
    "503": "The database is away, slow, or met a concurrent write.",
}
_BATCH_ERROR: Schema = {
    "allOf": [
        ref("schemas", "Error"),
        {"type": "object", "properties": {"operation": {"type": "integer", "minimum": 0}}},
    ],
    "description": "The error envelope; `operation` is the index of the failing operation.",
}


def batch_items(spec: ObjectSpec) -> list[OperationPart]:
    """One part per write operation `spec` allows: the schema of such an item of `operations`, and the
    scope that lets a token send it."""
    parts = []
    data = _data_schema(spec)
    for operation in _WRITES:
        if operation in spec.operations:
            name = f"{spec.name}.Batch{operation.value.capitalize()}"
            schema = _item(spec, operation)
            scope = spec.scope_for(operation)
            parts.append(
                OperationPart(
                    PATH, "post", scope, ref("schemas", name), {"schemas": {name: schema, **data}}, SECTION
                )
            )
    return parts


def batch_operation(items: Sequence[OperationPart]) -> tuple[Schema, dict[str, dict[str, Schema]]]:
    """The `/batch` operation of a document whose token may send `items`, and the schemas it adds."""
    schemas: dict[str, Schema] = {"BatchRef": _REF, "BatchResult": _RESULT, "BatchError": _BATCH_ERROR}
    for item in items:
        schemas.update(item.components["schemas"])
    body = {
        "type": "object",
        "required": ["operations"],
        "additionalProperties": False,
        "properties": {
            "operations": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_OPERATIONS,
                "items": {"oneOf": [item.operation for item in items]},
            }
        },
    }
    operation = {
        "tags": [TAG.name],
        "operationId": "batch",
        "summary": "Create, update and delete records of several objects at once, all or none",
        "description": _DESCRIPTION,
        "parameters": [conditional.idempotency_key()],
        "requestBody": {"required": True, "content": json_content(body)},
        "responses": {"200": _SUCCESS, **{status: _error(text) for status, text in _ERRORS.items()}},
    }
    return operation, {"schemas": schemas}


def _item(spec: ObjectSpec, operation: Operation) -> Schema:
    properties: Schema = {
        "op": {"const": operation.value},
        "object": {"const": spec.name},
        "label": {"type": "string", "minLength": 1, "maxLength": 100},
    }
    required = ["op", "object"]
    if operation is not Operation.CREATE:
        properties["id"] = {"anyOf": [_key_schema(spec), ref("schemas", "BatchRef")]}
        properties["if_match"] = {"type": "string", "description": "As the `If-Match` header."}
        required.append("id")
    if operation is not Operation.DELETE:
        properties["data"] = _data(spec, partial=operation is Operation.UPDATE)
        required.append("data")
    return {
        "type": "object",
        "required": required,
        "additionalProperties": False,
        "properties": properties,
        "description": f"{operation.value.capitalize()} a record of `{spec.name}`; needs the scope "
        f"`{spec.scope_for(operation)}`.",
    }


def _key_schema(spec: ObjectSpec) -> Schema:
    return {"type": "integer"} if spec.pk.kind == INTEGER else {"type": "string", "minLength": 1}


def _data_schema(spec: ObjectSpec) -> dict[str, Schema]:
    """`<object>.BatchData`: the fields an update may send, where any value may be a `BatchRef`;
    shared by the object's create and update items."""
    if spec.validator is None:
        return {}
    body: dict[str, Any] = dict(spec.validator.json_schema(partial=True))
    properties = body.get("properties", {})
    body["properties"] = {
        name: {"anyOf": [schema, ref("schemas", "BatchRef")]} for name, schema in properties.items()
    }
    return {f"{spec.name}.BatchData": body}


def _data(spec: ObjectSpec, *, partial: bool) -> Schema:
    """An item's `data`: the single write's body, any value of it possibly a `BatchRef`."""
    if spec.validator is None:
        return {"type": "object"}
    data = ref("schemas", f"{spec.name}.BatchData")
    required = [] if partial else spec.validator.json_schema(partial=False).get("required", [])
    return {"allOf": [data, {"required": required}]} if required else data


def _error(description: str) -> Schema:
    return {"description": description, "content": json_content(ref("schemas", "BatchError"))}


_RESULT: Schema = {
    "type": "object",
    "required": ["status", "data", "etag"],
    "properties": {
        "status": {"type": "integer", "enum": [200, 201, 204]},
        "data": {
            "type": ["object", "null"],
            "additionalProperties": True,  # so a client reads its fields (`Record<string, never>` without)
            "description": "The record as its own write answers it (only its key without the read "
            "scope); null for a delete.",
        },
        "etag": {"type": ["string", "null"], "description": "The record's new tag, as `ETag` would be."},
    },
}
_SUCCESS: Schema = {
    "description": "Every operation was written; one result per operation, in order.",
    "content": json_content(
        {
            "type": "object",
            "required": ["data"],
            "properties": {"data": {"type": "array", "items": ref("schemas", "BatchResult")}},
        }
    ),
}
_DESCRIPTION = (
    "All operations run in one transaction: every one is written, or none. Each is checked as its own "
    "request would be (object, operation, scope, record, rules, `unique`, `if_match`). "
    '`{"$ref": "<label>"}` in a later operation\'s `id` or `data` stands for the key the operation '
    "with that `label` wrote. A failure answers the failing operation's status and error, with "
    f"`operation` (its index) added. At most {MAX_OPERATIONS} operations; each counts as one request "
    "for the rate limit. `Idempotency-Key` applies to the whole batch."
)


__all__ = ["PATH", "SECTION", "TAG", "batch_items", "batch_operation"]
