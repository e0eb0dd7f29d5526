"""docs/writes.md "Atomic batches": POST /batch writes every operation or none, each checked as its
own request would be, on each database; what is stored is read from the database itself."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa

from tests.api.batch_site import (
    BATCH,
    batch_registry,
    count,
    create_batch_site,
    labels,
    op,
    serve_batch_site,
    snapshot,
)
from tests.support.demo import articles, authors

GUARD = 60.0  # a batch still running after this is hanging: the test fails instead


@pytest.fixture
async def site(database, host_factory):
    host = await serve_batch_site(database, host_factory)
    return host


async def send(host, body, headers=None, **options):
    return await asyncio.wait_for(
        host.client.post(BATCH, json=body, headers=headers or host.headers, **options), GUARD
    )


async def shown(host, name: str, key) -> dict:
    answer = await host.client.get(f"/api/pb/v1/objects/{name}/{key}", headers=host.headers)
    assert answer.status_code == 200, answer.text
    return answer


async def test_mixed_operations_across_two_objects_are_all_written(site):
    body = {
        "operations": [
            op("create", "authors", data={"name": "Neo", "email": "neo@example.com"}, label="neo"),
            op("create", "articles", data={"title": "By Neo", "author_id": {"$ref": "neo"}}),
            op("update", "articles", id=1, data={"views": 99}),
            op("update", "authors", id=2, data={"name": "Boris B."}),
            op("delete", "articles", id=4),
        ]
    }
    answer = await send(site, body)

    assert answer.status_code == 200, answer.text
    results = answer.json()["data"]
    assert [result["status"] for result in results] == [201, 201, 200, 200, 204]
    author_key = results[0]["data"]["id"]
    article_key = results[1]["data"]["id"]
    assert results[1]["data"]["author_id"] == author_key
    assert results[4] == {"status": 204, "data": None, "etag": None}
    for result, name, key in ((results[1], "articles", article_key), (results[2], "articles", 1)):
        own = await shown(site, name, key)
        assert result["data"] == own.json()["data"] and result["etag"] == own.headers["etag"]
    database = site.database
    row = await database.fetch_one(sa.select(articles).where(articles.c.id == article_key))
    assert row is not None and row.title == "By Neo" and row.author_id == author_key and row.published
    assert await database.fetch_val(sa.select(articles.c.views).where(articles.c.id == 1)) == 99
    assert await database.fetch_val(sa.select(authors.c.name).where(authors.c.id == 2)) == "Boris B."
    assert await count(database, articles, articles.c.id == 4) == 0


async def test_a_ref_in_an_id_addresses_the_record_an_earlier_operation_created(site):
    body = {
        "operations": [
            op("create", "articles", data={"title": "Draft to fix"}, label="draft"),
            op("update", "articles", id={"$ref": "draft"}, data={"title": "Fixed"}),
            op("create", "articles", data={"title": "Gone again"}, label="gone"),
            op("delete", "articles", id={"$ref": "gone"}),
        ]
    }
    answer = await send(site, body)

    assert answer.status_code == 200, answer.text
    first, second, third, fourth = answer.json()["data"]
    assert second["data"]["id"] == first["data"]["id"] and second["data"]["title"] == "Fixed"
    assert fourth["status"] == 204
    titles = {row[0] for row in await site.database.fetch_all(sa.select(articles.c.title))}
    assert "Fixed" in titles and "Draft to fix" not in titles and "Gone again" not in titles
    assert await count(site.database, articles, articles.c.id == third["data"]["id"]) == 0


async def test_a_run_of_creates_gets_each_row_its_own_key_in_order(site):
    names = [f"Writer {number}" for number in range(12)]
    body = {"operations": [op("create", "authors", data={"name": name}) for name in names]}
    answer = await send(site, body)

    assert answer.status_code == 200, answer.text
    results = answer.json()["data"]
    keys = [result["data"]["id"] for result in results]
    assert [result["data"]["name"] for result in results] == names and len(set(keys)) == 12
    stored = {
        row[0]: row[1] for row in await site.database.fetch_all(sa.select(authors.c.id, authors.c.name))
    }
    assert [stored[key] for key in keys] == names


@pytest.mark.parametrize(
    ("failing", "status", "error"),
    [
        (op("create", "articles", data={"title": ""}), 422, "validation_failed"),
        (op("create", "articles", data={"title": "x", "secret": "s"}), 422, "validation_failed"),
        (op("update", "articles", id=999, data={"views": 1}), 404, "not_found"),
        (op("update", "articles", id=5, data={"views": 1}), 404, "not_found"),  # not published
        (op("delete", "articles", id="01"), 404, "not_found"),  # not the canonical id
        (op("update", "articles", id=1, data={"views": 1}, if_match='"stale"'), 412, "precondition_failed"),
        (
            op("create", "authors", data={"name": "Copy", "email": "anna@example.com"}),
            422,
            "validation_failed",
        ),
        (op("create", "labels", data={"name": "taken"}), 422, "validation_failed"),  # the database refuses
        (op("update", "labels", id=1, data={"name": "x"}), 405, "method_not_allowed"),
        (op("create", "nothing", data={}), 404, "unknown_object"),
        (op("create", "articles", data={"author_id": {"$ref": "later"}}), 422, "validation_failed"),
        (op("create", "articles", id=3, data={"title": "x"}), 422, "validation_failed"),
        (op("upsert", "articles", data={"title": "x"}), 422, "validation_failed"),
    ],
)
async def test_a_failing_operation_is_answered_with_its_index_and_nothing_is_written(
    site, failing, status, error
):
    await site.database.execute(labels.insert().values(name="taken", published=True))
    before = await snapshot(site.database)
    body = {
        "operations": [
            op("create", "authors", data={"name": "Written first"}, label="later_not"),
            op("create", "articles", data={"title": "Written second"}),
            op("update", "articles", id=1, data={"title": "Changed third"}),
            op("create", "labels", data={"name": "fresh"}),
            failing,
            op("create", "articles", data={"title": "After"}, label="later"),
        ]
    }
    answer = await send(site, body)

    assert answer.status_code == status, answer.text
    assert answer.json()["error"] == error and answer.json()["operation"] == 4
    assert "select" not in answer.text.lower() and "insert" not in answer.text.lower()
    assert await snapshot(site.database) == before


async def test_a_token_without_the_write_scope_gets_a_403_naming_it_and_nothing_is_written(site):
    before = await snapshot(site.database)
    headers = site.auth(await site.token("articles.*,authors.read"))
    body = {
        "operations": [
            op("create", "articles", data={"title": "Would be written"}),
            op("update", "authors", id=1, data={"name": "Not allowed"}),
        ]
    }
    answer = await send(site, body, headers)

    assert answer.status_code == 403
    assert answer.json() | {"message": ""} == {
        "error": "forbidden",
        "message": "",
        "required_scope": "authors.write",
        "operation": 1,
    }
    assert await snapshot(site.database) == before


async def test_an_object_the_token_cannot_reach_is_unknown(site):
    headers = site.auth(await site.token("articles.*"))
    answer = await send(site, {"operations": [op("delete", "authors", id=2)]}, headers)
    assert answer.status_code == 404 and answer.json()["error"] == "unknown_object"
    assert answer.json()["operation"] == 0


async def test_a_value_the_database_refuses_midway_in_a_run_of_creates_names_its_operation(site):
    await site.database.execute(labels.insert().values(name="taken", published=True))
    before = await snapshot(site.database)
    names = ["one", "two", "taken", "four"]
    answer = await send(site, {"operations": [op("create", "labels", data={"name": n}) for n in names]})

    assert answer.status_code == 422 and answer.json()["operation"] == 2
    assert answer.json()["details"] == {"name": ["The value conflicts with the database's constraints."]}
    assert await snapshot(site.database) == before


async def test_a_unique_value_taken_by_an_earlier_operation_of_the_batch_fails_the_later_one(site):
    before = await snapshot(site.database)
    body = {
        "operations": [
            op("create", "authors", data={"name": "A", "email": "same@example.com"}),
            op("create", "authors", data={"name": "B", "email": "other@example.com"}),
            op("create", "authors", data={"name": "C", "email": "same@example.com"}),
        ]
    }
    answer = await send(site, body)

    assert answer.status_code == 422 and answer.json()["operation"] == 2
    assert list(answer.json()["details"]) == ["email"]
    assert await snapshot(site.database) == before


async def test_a_later_failure_is_answered_after_an_earlier_one_in_the_same_run(site):
    body = {
        "operations": [
            op("create", "authors", data={"name": "A", "email": "anna@example.com"}),  # taken
            op("create", "authors", data={"name": ""}),  # invalid, but after the first
        ]
    }
    answer = await send(site, body)
    assert answer.status_code == 422 and answer.json()["operation"] == 0
    assert list(answer.json()["details"]) == ["email"]


async def test_if_match_with_the_current_tag_lets_the_update_through(site):
    tag = (await shown(site, "articles", 1)).headers["etag"]
    body = {"operations": [op("update", "articles", id=1, data={"views": 7}, if_match=tag)]}
    answer = await send(site, body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"][0]["etag"] == (await shown(site, "articles", 1)).headers["etag"]


async def test_a_write_only_token_learns_only_the_keys_and_the_acting_user_is_recorded(site):
    headers = site.auth(await site.token("articles.write", user_id="42"))
    body = {
        "operations": [
            op("create", "articles", data={"title": "By a user"}),
            op("update", "articles", id=2, data={"views": 1}),
        ]
    }
    answer = await send(site, body, headers)

    assert answer.status_code == 200, answer.text
    created, updated = answer.json()["data"]
    assert created == {"status": 201, "data": {"id": created["data"]["id"]}, "etag": None}
    assert updated == {"status": 200, "data": {"id": 2}, "etag": None}
    row = await site.database.fetch_one(sa.select(articles).where(articles.c.id == created["data"]["id"]))
    assert row.created_by == "42" and row.updated_by == "42"
    updated_by = await site.database.fetch_val(sa.select(articles.c.updated_by).where(articles.c.id == 2))
    assert updated_by == "42"


async def test_the_body_is_checked_as_a_single_write_body_is(site):
    many = {"operations": [op("create", "labels", data={"name": f"n{i}"}) for i in range(101)]}
    cases = [
        (await send(site, many), 413, "payload_too_large"),
        (await send(site, {"operations": []}), 422, "validation_failed"),
        (await send(site, {"operations": {}}), 422, "validation_failed"),
        (await send(site, {"operations": [], "extra": 1}), 422, "validation_failed"),
        (await send(site, {"operations": ["create"]}), 422, "validation_failed"),
    ]
    raw = {**site.headers, "Content-Type": "application/json"}
    malformed = await site.client.post(BATCH, content=b"{nope", headers=raw)
    cases.append((malformed, 400, "bad_request"))
    listed = await site.client.post(BATCH, content=b"[]", headers=raw)
    cases.append((listed, 400, "bad_request"))
    text = await site.client.post(
        BATCH, content=b"{}", headers={**site.headers, "Content-Type": "text/plain"}
    )
    cases.append((text, 415, "unsupported_media_type"))
    big = await site.client.post(BATCH, content=b" " * (1024 * 1024 + 1), headers=raw)
    cases.append((big, 413, "payload_too_large"))
    for answer, status, error in cases:
        assert (answer.status_code, answer.json()["error"]) == (status, error), answer.text
    assert await count(site.database, labels) == 0
    exactly = {"operations": [op("create", "labels", data={"name": f"n{i}"}) for i in range(100)]}
    assert (await send(site, exactly)).status_code == 200
    assert await count(site.database, labels) == 100


async def test_other_methods_are_405_and_a_custom_route_may_not_take_the_path(site):
    from pb_headless import HeadlessAPI, route
    from pb_headless.custom_routes import RouteError

    answer = await site.client.get(BATCH, headers=site.headers)
    assert answer.status_code == 405 and answer.headers["allow"] == "OPTIONS, POST"

    async def endpoint(request):
        return {}

    with pytest.raises(RouteError, match="would shadow the generic endpoint /batch"):
        HeadlessAPI(site.database, batch_registry(), routes=[route("POST", "/batch")(endpoint)])


async def test_an_idempotent_batch_is_written_once_and_its_answer_replayed(site):
    headers = {**site.headers, "Idempotency-Key": "batch-1"}
    body = {"operations": [op("create", "articles", data={"title": "Once"}), op("delete", "articles", id=3)]}
    first = await send(site, body, headers)
    again = await send(site, body, headers)

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert await count(site.database, articles, articles.c.title == "Once") == 1
    other = await send(site, {"operations": [op("delete", "articles", id=2)]}, headers)
    assert other.status_code == 422 and other.json()["error"] == "idempotency_key_reused"
    assert await count(site.database, articles, articles.c.id == 2) == 1


async def test_each_operation_counts_as_one_request_for_the_rate_limit(database, host_factory):
    await create_batch_site(database)
    host = await host_factory(database, batch_registry(), rate_limit=10)
    headers = host.auth(await host.token("*"))
    five = {"operations": [op("create", "labels", data={"name": f"r{i}"}) for i in range(5)]}
    answer = await host.client.post(BATCH, json=five, headers=headers)
    assert answer.status_code == 200 and answer.headers["x-ratelimit-remaining"] == "5"
    six = {"operations": [op("create", "labels", data={"name": f"s{i}"}) for i in range(6)]}
    refused = await host.client.post(BATCH, json=six, headers=headers)
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    assert await count(database, labels) == 5


async def test_the_change_feed_gets_every_change_of_the_batch_after_its_commit(site):
    reader = site.auth(await site.token("articles.read"))
    since = (await site.client.get("/api/pb/v1/changes/articles", headers=reader)).json()["meta"]["next"]
    body = {
        "operations": [
            op("create", "articles", data={"title": "Feed one"}),
            op("create", "articles", data={"title": "Feed two"}),
            op("update", "articles", id=6, data={"title": "Feed three"}),
            op("delete", "articles", id=7),
        ]
    }
    answer = await send(site, body)
    assert answer.status_code == 200, answer.text
    one, two = (result["data"]["id"] for result in answer.json()["data"][:2])

    feed = await site.client.get("/api/pb/v1/changes/articles", params={"since": since}, headers=reader)
    entries = feed.json()["data"]
    assert [(entry["op"], entry["id"]) for entry in entries] == [
        ("upsert", one),
        ("upsert", two),
        ("upsert", 6),
        ("delete", 7),
    ]
    assert entries[2]["record"]["title"] == "Feed three"


async def test_a_failed_batch_leaves_nothing_in_the_change_feed(site):
    reader = site.auth(await site.token("articles.read"))
    since = (await site.client.get("/api/pb/v1/changes/articles", headers=reader)).json()["meta"]["next"]
    body = {
        "operations": [
            op("create", "articles", data={"title": "Rolled back"}),
            op("delete", "articles", id=99),
        ]
    }
    assert (await send(site, body)).status_code == 404
    feed = await site.client.get("/api/pb/v1/changes/articles", params={"since": since}, headers=reader)
    assert feed.json()["data"] == []
