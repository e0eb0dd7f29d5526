"""The webhooks a site sends, in the OpenAPI 3.1 document's top-level `webhooks` (docs/webhooks.md).

One entry per object, for its events `create`, `update` and `delete` (the body's `type`, e.g.
`articles.update`), and the test event a site owner sends (`articles.test`, without id or record): the
POST a registered endpoint receives, with the Standard Webhooks headers.
They are in the site owner's document (`full_document`: the docs page, `pb-headless openapi`), not in
a token's `/openapi.json`: a token can neither register an endpoint nor receive a delivery, and client
generators fed a token's document (openapi-generator's Python generator, 7.x) turn 3.1 `webhooks` into
client methods that do not compile. A body's record is the object's `Record`.
"""

from __future__ import annotations

from pb_headless.openapi.components import json_content, ref
from pb_headless.openapi.parts import OperationPart, Schema
from pb_headless.openapi.values import record_value_schema
from pb_headless.registry.spec import ObjectSpec
from pb_headless.webhooks.options import RETRY_DELAYS
from pb_headless.webhooks.payload import TEST_EVENT

EVENTS = ("create", "update", "delete")
_HEADERS: dict[str, Schema] = {
    "webhooks.webhook-id": {
        "name": "webhook-id",
        "in": "header",
        "required": True,
        "description": "The event's id (`msg_…`): the same on every try, so a receiver drops repeats by it.",
        "schema": {"type": "string", "pattern": "^msg_[0-9a-f]{32}$"},
    },
    "webhooks.webhook-timestamp": {
        "name": "webhook-timestamp",
        "in": "header",
        "required": True,
        "description": "When this try was sent, in Unix seconds; a receiver refuses one far from its clock.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    "webhooks.webhook-signature": {
        "name": "webhook-signature",
        "in": "header",
        "required": True,
        "description": (
            "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the "
            "endpoint's secret (the base64 after `whsec_`): Standard Webhooks, so the `standardwebhooks` "
            "package verifies it."
        ),
        "schema": {"type": "string", "pattern": "^v1,[A-Za-z0-9+/]+={0,2}$"},
    },
}
_RETRIES = ", ".join(
    f"{delay // 3600:g} h" if delay >= 3600 else f"{delay // 60:g} min" if delay >= 60 else f"{delay:g} s"
    for delay in RETRY_DELAYS
)
_RESPONSES: dict[str, Schema] = {
    "webhooks.Received": {
        "description": "Received: the delivery is done (the answer must come within 10 s)."
    },
    "webhooks.NotReceived": {
        "description": (
            f"Not received (as is no answer within 10 s): the same event is tried again after {_RETRIES}, "
            "then the delivery is marked failed."
        )
    },
}


def webhook_operations(spec: ObjectSpec) -> list[OperationPart]:
    """One entry, named after the object, for its three events (the body's `type` tells them apart)."""
    body_name = f"{spec.name}.Webhook"
    operation = {
        "tags": [spec.name],
        "operationId": f"webhook_{spec.name}",
        "summary": f"A row of `{spec.name}` was created, updated or deleted",
        "description": (
            f"POSTed at least once to each enabled endpoint that takes `{spec.name}` and the event, "
            "whoever made the change; the URL is the receiver's (docs/webhooks.md)."
        ),
        "security": [],
        "parameters": [ref("parameters", header) for header in _HEADERS],
        "requestBody": {"required": True, "content": json_content(ref("schemas", body_name))},
        "responses": {
            "2XX": ref("responses", "webhooks.Received"),
            "default": ref("responses", "webhooks.NotReceived"),
        },
    }
    components = {"parameters": _HEADERS, "responses": _RESPONSES, "schemas": {body_name: _body(spec)}}
    return [OperationPart(spec.name, "post", spec.read_scope, operation, components, section="webhooks")]


def _body(spec: ObjectSpec) -> Schema:
    return {
        "type": "object",
        "required": ["type", "timestamp", "data"],
        "properties": {
            "type": {
                "enum": [f"{spec.name}.{event}" for event in (*EVENTS, TEST_EVENT)],
                "description": f"`{spec.name}.test`: a test event sent by a site owner; id and record null.",
            },
            "timestamp": {
                "type": "string",
                "format": "date-time",
                "description": "When the change committed.",
            },
            "data": {
                "type": "object",
                "required": ["object", "id", "record"],
                "properties": {
                    "object": {"const": spec.name},
                    "id": {"oneOf": [record_value_schema(spec.pk), {"type": "null"}]},
                    "record": {
                        "oneOf": [ref("schemas", f"{spec.name}.Record"), {"type": "null"}],
                        "description": (
                            "The row as show renders it with every field, read when the try is sent; "
                            "null for a delete and for a row no longer visible (deleted since, "
                            "unpublished, outside the object's query)."
                        ),
                    },
                },
            },
        },
    }
