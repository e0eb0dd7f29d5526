"""An object's OpenAPI parts: its record schema, its write bodies and one operation per allowed operation.

Write bodies come from the object's `Validator`, the same one that checks them (docs/writes.md).
"""

from __future__ import annotations

from dataclasses import replace

from pb_headless.openapi import conditional
from pb_headless.openapi.components import error_responses, json_content, ref, security
from pb_headless.openapi.filters import filter_schemas
from pb_headless.openapi.parameters import (
    Parameter,
    component_name,
    keyset_parameters,
    list_parameters,
    selection_parameters,
    show_parameters,
)
from pb_headless.openapi.parts import OperationPart, Schema, Tag
from pb_headless.openapi.records import key_only, record_schema, schema_name
from pb_headless.registry.spec import INTEGER, ObjectSpec

OPERATION_ORDER = ("list", "create", "show", "update", "delete")
PREFER = ref("parameters", "Prefer")  # shared by every list and show (components.py)
_COLLECTION_ERRORS = ("BadRequest", "Unauthorized", "Forbidden", "UnknownObject")
_RECORD_ERRORS = ("BadRequest", "Unauthorized", "Forbidden", "NotFound")
_BODY_ERRORS = ("PayloadTooLarge", "UnsupportedMediaType", "ValidationFailed")
_LAST_ERRORS = ("RateLimited", "ServerError")


def object_tag(spec: ObjectSpec) -> Tag:
    operations = ", ".join(op for op in OPERATION_ORDER if op in spec.operations)
    return Tag(spec.name, f"The published object `{spec.name}` ({operations}).")


def object_operations(spec: ObjectSpec) -> list[OperationPart]:
    """One part per operation the object allows, in the order list, create, show, update, delete; a
    write in two variants, for a token that may read the object and for one that may not."""
    builders = {"list": _list, "create": _create, "show": _show, "update": _update, "delete": _delete}
    parts: list[OperationPart] = []
    for operation in OPERATION_ORDER:
        if operation not in spec.operations:
            continue
        part = builders[operation](spec)
        if operation in ("create", "update"):
            parts += [replace(part, variant=(spec.read_scope, True)), key_only(spec, part)]
        else:
            parts.append(part)
    return parts


def _part(
    spec: ObjectSpec, operation: str, path: str, method: str, body: Schema, schemas: dict[str, Schema]
) -> OperationPart:
    scope = spec.scope_for(operation)
    body = {
        "tags": [spec.name],
        "operationId": f"{operation}_{spec.name}",
        **body,
        "security": security(scope),
    }
    body["description"] = f"{body.get('description', '')}Requires the scope `{scope}`.".strip()
    record = {schema_name(spec, "Record"): record_schema(spec)}
    components: dict[str, dict[str, Schema]] = {"schemas": {**record, **schemas}}
    # Parameters and answers that several operations of the object share are components, named
    # `<object>.<what>`, so the document states them once; each part carries those it refers to.
    shared = _shared(spec)
    for section in ("parameters", "responses"):
        used = dict.fromkeys(entry["$ref"].rsplit("/", 1)[1] for entry in _refs(body, section))  # in order
        components[section] = {name: shared[section][name] for name in used if name in shared[section]}
    return OperationPart(path, method, scope, body, components)


def _refs(body: Schema, section: str) -> list[Schema]:
    """The `$ref` entries of `body` that point into `components/<section>`."""
    entries = body.get("parameters", []) if section == "parameters" else [*body["responses"].values()]
    return [entry for entry in entries if entry.get("$ref", "").startswith(f"#/components/{section}/")]


def _shared(spec: ObjectSpec) -> dict[str, dict[str, Schema]]:
    parameters = {
        **{
            component_name(spec, parameter): parameter
            for parameter in (_id_parameter(spec), *selection_parameters(spec), *show_parameters(spec))
        },
        **keyset_parameters(),  # the same on every list: one component each, named plainly
    }
    record = conditional.tagged(
        {"description": "The record.", "content": json_content(ref("schemas", schema_name(spec, "Single")))}
    )
    return {"parameters": parameters, "responses": {schema_name(spec, "Record"): record}}


def _by_reference(spec: ObjectSpec, parameters: list[Schema]) -> list[Schema]:
    """`parameters` with those the object's operations share (`id`, the filters, `search`, `fields`,
    `with`) as references."""
    shared = _shared(spec)["parameters"]
    return [
        ref("parameters", component_name(spec, parameter))
        if "name" in parameter and component_name(spec, parameter) in shared
        else parameter
        for parameter in parameters
    ]


def _data_response(spec: ObjectSpec, description: str, headers: Schema | None = None) -> Schema:
    return {
        "description": description,
        **({"headers": headers} if headers else {}),
        "content": json_content(ref("schemas", schema_name(spec, "Single"))),
    }


def _single_schema(spec: ObjectSpec) -> dict[str, Schema]:
    record = ref("schemas", schema_name(spec, "Record"))
    return {
        schema_name(spec, "Single"): {"type": "object", "required": ["data"], "properties": {"data": record}}
    }


def _list(spec: ObjectSpec) -> OperationPart:
    envelope = {
        "type": "object",
        "required": ["data", "meta", "links"],
        "properties": {
            "data": {"type": "array", "items": ref("schemas", schema_name(spec, "Record"))},
            "meta": ref("schemas", "ListMeta"),
            "links": ref("schemas", "ListLinks"),
        },
    }
    responses = {
        "200": conditional.tagged(
            {
                "description": "A page of records.",
                "content": json_content(ref("schemas", schema_name(spec, "List"))),
            }
        ),
        "304": conditional.not_modified(),
        **error_responses(*_COLLECTION_ERRORS, "ValidationFailed", *_LAST_ERRORS),
    }
    operation = {
        "summary": f"List {spec.name}",
        "description": "Filter operators, bounds and errors are in the API's description. ",
        "parameters": [*_by_reference(spec, list_parameters(spec)), PREFER, conditional.if_none_match()],
        "responses": responses,
    }
    return _part(
        spec,
        "list",
        _collection(spec),
        "get",
        operation,
        {schema_name(spec, "List"): envelope, **filter_schemas(spec)},
    )


def _show(spec: ObjectSpec) -> OperationPart:
    responses = {
        "200": ref("responses", schema_name(spec, "Record")),
        "304": conditional.not_modified(),
        **error_responses(*_RECORD_ERRORS, *_LAST_ERRORS),
    }
    parameters = _by_reference(spec, [_id_parameter(spec), *show_parameters(spec)])
    operation = {
        "summary": f"Show one record of {spec.name}",
        "parameters": [*parameters, PREFER, conditional.if_none_match()],
        "responses": responses,
    }
    return _part(spec, "show", _record(spec), "get", operation, _single_schema(spec))


def _create(spec: ObjectSpec) -> OperationPart:
    location = {
        "Location": {
            "required": False,
            "description": "The address of the new record; absent "
            "when the object does not serve it (created unpublished, or outside its query).",
            "schema": {"type": "string"},
        },
        "ETag": ref("headers", "ETag"),
        "Idempotent-Replayed": ref("headers", "Idempotent-Replayed"),
    }
    body_errors = ("PayloadTooLarge", "UnsupportedMediaType", "CreateRefused", "IdempotencyInProgress")
    responses = {
        "201": _data_response(spec, "The record, created.", location),
        **error_responses(*_COLLECTION_ERRORS, *body_errors, *_LAST_ERRORS),
    }
    operation = {
        "summary": f"Create a record of {spec.name}",
        "description": "Only writable fields are accepted; any other field is a 422 "
        f"(`is not writable`) and nothing is written. {_constraints(spec)}",
        "parameters": [conditional.idempotency_key()],
        "requestBody": _body(spec, "Create"),
        "responses": responses,
    }
    return _part(
        spec,
        "create",
        _collection(spec),
        "post",
        operation,
        {**_single_schema(spec), schema_name(spec, "Create"): _body_schema(spec, partial=False)},
    )


def _update(spec: ObjectSpec) -> OperationPart:
    responses = {
        "200": ref("responses", schema_name(spec, "Record")),
        **error_responses(*_RECORD_ERRORS, "PreconditionFailed", *_BODY_ERRORS, *_LAST_ERRORS),
    }
    operation = {
        "summary": f"Update a record of {spec.name}",
        "description": "Only the fields sent are checked and changed; `{}` changes nothing. "
        f"{_constraints(spec)}",
        "parameters": [*_by_reference(spec, [_id_parameter(spec)]), conditional.if_match()],
        "requestBody": _body(spec, "Update"),
        "responses": responses,
    }
    return _part(
        spec,
        "update",
        _record(spec),
        "patch",
        operation,
        {**_single_schema(spec), schema_name(spec, "Update"): _body_schema(spec, partial=True)},
    )


def _delete(spec: ObjectSpec) -> OperationPart:
    # 422: the database refuses the delete (another table's row still refers to this record).
    responses = {
        "204": {"description": "Deleted; no body."},
        **error_responses(*_RECORD_ERRORS, "PreconditionFailed", "ValidationFailed", *_LAST_ERRORS),
    }
    operation = {
        "summary": f"Delete a record of {spec.name}",
        "description": "A record that rows of another table still refer to (a foreign key the "
        "schema cannot express) is kept: 422 naming `id`. ",
        "parameters": [*_by_reference(spec, [_id_parameter(spec)]), conditional.if_match()],
        "responses": responses,
    }
    return _part(spec, "delete", _record(spec), "delete", operation, {})


def _constraints(spec: ObjectSpec) -> str:
    """What the database checks and a schema cannot say: each writable foreign key must name a row."""
    keys = []
    for name in spec.writable:
        field = spec.columns.get(name)
        for key in field.column.foreign_keys if field is not None else ():
            keys.append(f"`{name}` must name an existing `{key.column.table.name}.{key.column.name}`")
    if not keys:
        return ""
    return (
        f"Checked by the database, not by this schema: {'; '.join(keys)}; otherwise 422 naming the field "
        "(SQLite checks foreign keys only when the host turns them on). "
    )


def _body(spec: ObjectSpec, what: str) -> Schema:
    return {"required": True, "content": json_content(ref("schemas", schema_name(spec, what)))}


def _body_schema(spec: ObjectSpec, *, partial: bool) -> Schema:
    if spec.validator is None:
        return {"type": "object"}
    schema: Schema = spec.validator.json_schema(partial=partial)
    return schema


def _id_parameter(spec: ObjectSpec) -> Parameter:
    schema: Schema = {"type": "string", "minLength": 1, "pattern": "^[^/\\u0000]+$"}
    if spec.pk.kind == INTEGER and spec.validator is not None:
        typed = spec.validator.field_schema(spec.pk.name)
        schema = {key: value for key, value in typed.items() if key in ("minimum", "maximum")}
        schema["type"] = "integer"
    return {
        "name": "id",
        "in": "path",
        "required": True,
        "schema": schema,
        "description": f"The record's `{spec.pk.name}`.",
    }


def _collection(spec: ObjectSpec) -> str:
    return f"/objects/{spec.name}"


def _record(spec: ObjectSpec) -> str:
    return f"/objects/{spec.name}/{{id}}"
