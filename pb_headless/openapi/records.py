"""The record schemas of an object: a record as list and show render it (with the fields that are always
there marked `required`), and the key alone that a write answers a token which may not read the object."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from pb_headless.openapi.components import json_content, ref
from pb_headless.openapi.parts import OperationPart, Schema
from pb_headless.openapi.values import record_value_schema
from pb_headless.registry.spec import FieldSpec, ObjectSpec, RelationSpec


def key_only(spec: ObjectSpec, part: OperationPart) -> OperationPart:
    """`part` as a token without the read scope sees it: its answer shows the new key alone."""
    status = "201" if part.method == "post" else "200"
    name = schema_name(spec, "Key")
    answer = {
        "description": f"The record's `{spec.pk.name}` alone: this token may write `{spec.name}`, "
        "not read it.",
        **{key: value for key, value in part.operation["responses"][status].items() if key == "headers"},
        "content": json_content(ref("schemas", name)),
    }
    operation = {**part.operation, "responses": {**part.operation["responses"], status: answer}}
    key = {
        "type": "object",
        "required": [spec.pk.name],
        "properties": {spec.pk.name: record_value_schema(spec.pk)},
    }
    schemas = {name: {"type": "object", "required": ["data"], "properties": {"data": key}}}
    components = {**part.components, "schemas": {**part.components.get("schemas", {}), **schemas}}
    return replace(part, operation=operation, components=components, variant=(spec.read_scope, False))


def schema_name(spec: ObjectSpec, what: str) -> str:
    return f"{spec.name}.{what}"


def record_schema(spec: ObjectSpec) -> Schema:
    """A record as list and show render it: the published fields, and relations asked for with `with`."""
    properties: Schema = {name: record_value_schema(field) for name, field in spec.fields.items()}
    for name, relation in spec.relations.items():
        properties[name] = _relation_schema(relation)
    return {
        "type": "object",
        "required": always_present(spec.fields.values()),
        "properties": properties,
        "description": f"A record of `{spec.name}`. Every field is there unless `fields` narrows them "
        f"(`{spec.pk.name}` always is); a relation only when `with` asks for it.",
    }


def always_present(fields: Iterable[FieldSpec]) -> list[str]:
    """The fields a record always shows with a value: the key, and every column the database cannot
    hold as NULL. A generated client types them as present and not null (TypeScript `title: string`,
    not `title?: string`); the other fields are typed with `null` (values.py)."""
    return [field.name for field in fields if field.column.primary_key or not field.column.nullable]


def _relation_schema(relation: RelationSpec) -> Schema:
    properties = {field.name: record_value_schema(field) for field in relation.fields}
    related = {"type": "object", "required": always_present(relation.fields), "properties": properties}
    note = f"Present when asked for with `with={relation.name}`."
    if relation.many:
        note += (
            f" At most {relation.limit} records; when there are more, the answer names the relation in "
            "the `X-Truncated-Relations` header (and a list in `meta.truncated`)."
        )
        return {"type": "array", "items": related, "maxItems": relation.limit, "description": note}
    return {**related, "type": ["object", "null"], "description": note}
