"""What a batch asks for: its operations read from the body and checked, before anything is written,
for their shape, object (404), operation (405), scope (403) and labels (422) — docs/writes.md,
"Atomic batches". No I/O: the record, body and `unique` checks run in the batch's transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from pb_headless.api.context import RequestContext
from pb_headless.api.service import reachable
from pb_headless.errors import (
    ApiError,
    Forbidden,
    MethodNotAllowed,
    PayloadTooLarge,
    UnknownObject,
    ValidationFailed,
)
from pb_headless.operations import MAX_BATCH_OPERATIONS as MAX_OPERATIONS
from pb_headless.operations import Operation
from pb_headless.registry import ObjectSpec

MAX_LABEL = 100  # characters of a label
KINDS = {"create": Operation.CREATE, "update": Operation.UPDATE, "delete": Operation.DELETE}
_MEMBERS = frozenset({"op", "object", "id", "data", "label", "if_match"})
BATCH_ALLOW = ("OPTIONS", "POST")


@dataclass(frozen=True, slots=True)
class Ref:
    """`{"$ref": "<label>"}`: the key the labelled earlier operation wrote."""

    label: str


@dataclass(frozen=True, slots=True)
class BatchOperation:
    index: int
    operation: Operation
    spec: ObjectSpec
    record_id: Any  # a scalar as sent, or a Ref; None for a create
    data: dict[str, Any] | None  # with every reference made a Ref; None for a delete
    label: str | None
    if_match: str


class TooManyOperations(PayloadTooLarge):
    default_message = f"A batch holds at most {MAX_OPERATIONS} operations."


def operation_count(content: bytes) -> int:
    """How many requests a batch body counts as for the rate limit: its operations, at least one
    (a body that is not a batch, or one over the bound that is refused at once, counts once)."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return 1
    operations = body.get("operations") if isinstance(body, dict) else None
    if not isinstance(operations, list) or len(operations) > MAX_OPERATIONS:
        return 1
    return max(len(operations), 1)


def failed_at(error: ApiError, index: int) -> ApiError:
    """The failing operation's own answer, naming its place in the batch."""
    error.extra["operation"] = index
    return error


def read_operations(context: RequestContext, body: Mapping[str, Any]) -> list[BatchOperation]:
    """The batch's operations in order; the first that fails its checks is answered with its index."""
    unknown = sorted(set(body) - {"operations"})
    if unknown:
        raise ValidationFailed(
            {name: ["is not allowed; a batch body holds only 'operations'"] for name in unknown}
        )
    raw = body.get("operations")
    if not isinstance(raw, list):
        raise ValidationFailed({"operations": ["must be a list of operations"]})
    if len(raw) > MAX_OPERATIONS:
        raise TooManyOperations()
    if not raw:
        raise ValidationFailed({"operations": ["must hold at least one operation"]})
    labels: dict[str, int] = {}
    operations = []
    for index, item in enumerate(raw):
        try:
            operation = _read(context, index, item, labels)
        except ApiError as error:
            raise failed_at(error, index) from None
        if operation.label is not None:
            labels[operation.label] = index
        operations.append(operation)
    return operations


def _read(context: RequestContext, index: int, item: Any, labels: Mapping[str, int]) -> BatchOperation:
    if not isinstance(item, dict):
        raise ValidationFailed({"operation": ["must be an object"]})
    unknown = sorted(set(item) - _MEMBERS)
    if unknown:
        raise ValidationFailed({name: ["is not allowed in an operation"] for name in unknown})
    op = item.get("op")
    kind = KINDS.get(op) if isinstance(op, str) else None
    if kind is None:
        raise ValidationFailed({"op": ["must be one of create, update, delete"]})
    spec = _reached(context, item.get("object"))
    _check_allowed(context, spec, kind)
    label, if_match = _label(item.get("label"), labels), item.get("if_match", "")
    if not isinstance(if_match, str):
        raise ValidationFailed({"if_match": ["must be an entity tag"]})
    return BatchOperation(
        index=index,
        operation=kind,
        spec=spec,
        record_id=_record_id(kind, item, labels),
        data=_data(kind, item, labels),
        label=label,
        if_match=if_match,
    )


def _reached(context: RequestContext, name: Any) -> ObjectSpec:
    """The object as its own request would find it: 404 `unknown_object` when the token cannot reach it."""
    spec = context.snapshot.catalog.get(name) if isinstance(name, str) else None
    if spec is None or not reachable((spec,), context.principal):
        raise UnknownObject(f"There is no object named '{name}'.")
    return spec


def _check_allowed(context: RequestContext, spec: ObjectSpec, kind: Operation) -> None:
    if kind not in spec.operations:
        allowed = ", ".join(sorted(op.value for op in spec.operations))
        raise MethodNotAllowed(
            BATCH_ALLOW, f"'{spec.name}' does not allow {kind.value}; it allows: {allowed}."
        )
    required = spec.scope_for(kind)
    if not context.principal.has_scope(required):
        raise Forbidden(required)


def _label(value: Any, labels: Mapping[str, int]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= MAX_LABEL:
        raise ValidationFailed({"label": [f"must be a text of 1 to {MAX_LABEL} characters"]})
    if value in labels:
        raise ValidationFailed({"label": [f"is already the label of operation {labels[value]}"]})
    return value


def _record_id(kind: Operation, item: Mapping[str, Any], labels: Mapping[str, int]) -> Any:
    if kind is Operation.CREATE:
        if "id" in item:
            raise ValidationFailed({"id": ["is not allowed on a create; send the key in data"]})
        return None
    if item.get("id") is None:
        raise ValidationFailed({"id": ["is required to update or delete a record"]})
    value = _with_refs(item["id"], "id", labels)
    if not isinstance(value, (Ref, str, int)) or isinstance(value, bool):
        raise ValidationFailed({"id": ['must be a record id or {"$ref": "<label>"}']})
    return value


def _data(kind: Operation, item: Mapping[str, Any], labels: Mapping[str, int]) -> dict[str, Any] | None:
    if kind is Operation.DELETE:
        if "data" in item:
            raise ValidationFailed({"data": ["is not allowed on a delete"]})
        return None
    data = item.get("data")
    if not isinstance(data, dict):
        raise ValidationFailed({"data": ["must be an object of field values"]})
    return {name: _with_refs(value, f"data.{name}", labels) for name, value in data.items()}


def _with_refs(value: Any, where: str, labels: Mapping[str, int]) -> Any:
    """`value` with every `{"$ref": "<label>"}` in it made a `Ref`; 422 for a label no earlier
    operation carries."""
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("$ref"), str):
            label = value["$ref"]
            if label not in labels:
                raise ValidationFailed(
                    {where: [f"refers to '{label}', which no earlier operation is labelled"]}
                )
            return Ref(label)
        return {name: _with_refs(inner, f"{where}.{name}", labels) for name, inner in value.items()}
    if isinstance(value, list):
        return [_with_refs(inner, f"{where}.{number}", labels) for number, inner in enumerate(value)]
    return value


def resolved(value: Any, keys: Mapping[str, Any]) -> Any:
    """`value` with every `Ref` replaced by the key its labelled operation wrote."""
    if isinstance(value, Ref):
        return keys[value.label]
    if isinstance(value, dict):
        return {name: resolved(inner, keys) for name, inner in value.items()}
    if isinstance(value, list):
        return [resolved(inner, keys) for inner in value]
    return value
