"""docs/openapi.md: the site owner's document describes the webhooks the site sends (OpenAPI 3.1
`webhooks`), and the POSTs a receiver gets match it: headers and body, for each event."""

from __future__ import annotations

import jsonschema
from openapi_spec_validator import validate

from pb_headless.openapi import full_document
from tests.openapi.conftest import document_of
from tests.support.demo import articles
from tests.webhooks.changes import create_row, delete_row, update_row

HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature"]


async def test_the_posts_a_receiver_gets_match_the_documented_webhook(site):
    snapshot = await site.host.api.snapshot()
    document = full_document(site.host.api, "http://testserver/api/pb/v1", snapshot)
    validate(document)
    await site.hook()
    await create_row(site.database, articles, {"id": 8, "title": "Fresh", "published": True})
    await update_row(site.database, articles, 8, {"title": "Fresher"})
    await delete_row(site.database, articles, 8)
    await site.deliver()

    hook = document["webhooks"]["articles"]["post"]
    headers = [resolved(document, parameter) for parameter in hook["parameters"]]
    body = resolved(document, hook["requestBody"]["content"]["application/json"]["schema"])
    assert [(header["name"], header["in"], header["required"]) for header in headers] == [
        (name, "header", True) for name in HEADERS
    ]
    posts = site.receiver.received
    assert [post.event["type"] for post in posts] == ["articles.create", "articles.update", "articles.delete"]
    for post in posts:
        for header in headers:
            jsonschema.Draft202012Validator(header["schema"]).validate(post.headers[header["name"]])
        validator = jsonschema.Draft202012Validator({**body, "components": document["components"]})
        validator.validate(post.event)
    assert set(document["webhooks"]) == set(snapshot.catalog)  # one entry per object


async def test_a_tokens_document_lists_no_webhooks(site):
    assert "webhooks" not in await document_of(site.host, "*")


def resolved(document: dict, item: dict) -> dict:
    while "$ref" in item:
        section, name = item["$ref"].removeprefix("#/components/").split("/")
        item = document["components"][section][name]
    return item
