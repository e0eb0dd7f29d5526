"""`POST /batch` in a token's document (docs/writes.md, "Atomic batches"): there for a token that may
write at least one object, its body a `oneOf` of one schema per object and operation it may send, and
the answers of a real batch valid against it."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate

from tests.api.batch_site import BATCH, batch_registry, create_batch_site, op
from tests.openapi.conftest import document_of, operations


@pytest.fixture
async def site(sqlite_database, host_factory):
    await create_batch_site(sqlite_database)
    return await host_factory(sqlite_database, batch_registry())


def batch_body(document: dict[str, Any]) -> dict[str, Any]:
    post = document["paths"]["/batch"]["post"]
    return {
        "components": document["components"],
        **post["requestBody"]["content"]["application/json"]["schema"],
    }


def items(document: dict[str, Any]) -> list[str]:
    one_of = batch_body(document)["properties"]["operations"]["items"]["oneOf"]
    return [entry["$ref"].rsplit("/", 1)[1] for entry in one_of]


async def test_a_token_that_may_write_nothing_has_no_batch(site):
    document = await document_of(site, "articles.read,authors.read,labels.read")
    assert "POST /batch" not in operations(document)
    assert "batch" not in [tag["name"] for tag in document["tags"]]
    assert not any(name.startswith("Batch") or ".Batch" in name for name in document["components"]["schemas"])


async def test_the_body_offers_only_the_operations_the_token_may_send(site):
    labels_only = await document_of(site, "labels.write")
    assert items(labels_only) == ["labels.BatchCreate"]  # labels allow no update or delete
    everything = await document_of(site, "*")
    assert items(everything) == [
        "articles.BatchCreate",
        "articles.BatchUpdate",
        "articles.BatchDelete",
        "authors.BatchCreate",
        "authors.BatchUpdate",
        "authors.BatchDelete",
        "labels.BatchCreate",
    ]
    validate(everything)
    assert "batch" in [tag["name"] for tag in everything["tags"]]


async def test_a_batch_with_refs_is_valid_against_the_document_and_so_is_its_answer(site):
    token = await site.token("*")
    document = await document_of(site, "*")
    body = {
        "operations": [
            op("create", "authors", data={"name": "Neo"}, label="neo"),
            op("create", "articles", data={"title": "By Neo", "author_id": {"$ref": "neo"}}, label="a"),
            op("update", "articles", id={"$ref": "a"}, data={"views": 2}, if_match="*"),
            op("delete", "articles", id=4),
        ]
    }
    jsonschema.Draft202012Validator(batch_body(document)).validate(body)
    for wrong in (
        {"operations": []},
        {"operations": [op("update", "labels", id=1, data={"name": "x"})]},
        {"operations": [op("create", "articles", data={"title": "x"}, id=3)]},
    ):
        assert not jsonschema.Draft202012Validator(batch_body(document)).is_valid(wrong)

    answer = await site.client.post(BATCH, json=body, headers=site.auth(token))
    assert answer.status_code == 200, answer.text
    ok = document["paths"]["/batch"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    jsonschema.Draft202012Validator({"components": document["components"], **ok}).validate(answer.json())
