"""docs/endpoints.md POST/PATCH/DELETE and docs/writes.md, on every database.

Every refused write is followed by a look at the table: nothing changed.
"""

from decimal import Decimal

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry
from tests.support.demo import articles, authors, create_demo, demo_registry
from tests.support.refusals import updates_refused

API = "/api/pb/v1/objects/articles"


async def table_state(database):
    rows = await database.fetch_all(sa.select(articles).order_by(articles.c.id))
    return [dict(row._mapping) for row in rows]


@pytest.fixture
async def writer(demo):
    demo.headers = demo.auth(await demo.token("articles.read,articles.write", user_id="42"))
    return demo


async def test_create_answers_201_with_the_record_and_its_location(writer):
    response = await writer.client.post(
        API, headers=writer.headers, json={"title": "Fresh", "price": 19.99, "category": "news"}
    )
    assert response.status_code == 201
    record = response.json()["data"]
    assert record["title"] == "Fresh" and record["price"] == "19.99"
    assert response.headers["location"] == f"http://testserver{API}/{record['id']}"
    shown = await writer.client.get(response.headers["location"], headers=writer.headers)
    assert shown.json()["data"] == record


async def test_a_created_row_is_published_and_records_the_acting_user(writer):
    response = await writer.client.post(API, headers=writer.headers, json={"title": "Fresh"})
    row = next(r for r in await table_state(writer.database) if r["id"] == response.json()["data"]["id"])
    assert row["published"] is True or row["published"] == 1
    assert row["created_by"] == "42" and row["updated_by"] == "42"


async def test_decimal_and_datetime_values_round_trip_without_loss(writer):
    body = {
        "title": "Precise",
        "price": "19.99",
        "created_at": "2026-03-04T05:06:07+02:00",
        "published_on": "2026-03-04",
    }
    record = (await writer.client.post(API, headers=writer.headers, json=body)).json()["data"]
    assert record["price"] == "19.99"
    assert record["created_at"] == "2026-03-04T03:06:07+00:00"
    assert record["published_on"] == "2026-03-04"
    row = next(r for r in await table_state(writer.database) if r["id"] == record["id"])
    assert row["price"] == Decimal("19.99")


async def test_update_changes_only_the_fields_sent(writer):
    before = await table_state(writer.database)
    response = await writer.client.patch(f"{API}/1", headers=writer.headers, json={"title": "Renamed"})
    assert response.status_code == 200
    assert response.json()["data"]["title"] == "Renamed"
    after = await table_state(writer.database)
    changed = {k for k in after[0] if after[0][k] != before[0][k]}
    assert changed == {"title", "updated_by"}
    assert after[1:] == before[1:]


async def test_an_empty_patch_changes_nothing(writer):
    before = await table_state(writer.database)
    response = await writer.client.patch(f"{API}/1", headers=writer.headers, json={})
    assert response.status_code == 200
    assert response.json()["data"]["id"] == 1
    assert await table_state(writer.database) == before


async def test_delete_answers_204_and_removes_the_row(writer):
    response = await writer.client.delete(f"{API}/4", headers=writer.headers)
    assert response.status_code == 204 and response.content == b""
    assert 4 not in {row["id"] for row in await table_state(writer.database)}
    assert (await writer.client.get(f"{API}/4", headers=writer.headers)).status_code == 404


async def test_three_failures_are_reported_together_and_nothing_is_written(writer):
    before = await table_state(writer.database)
    response = await writer.client.post(
        API, headers=writer.headers, json={"title": "", "category": "gossip", "secret": "x"}
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "validation_failed"
    assert body["details"] == {
        "title": ["The title field is required."],
        "category": ["The category field must be one of: news, company, sales."],
        "secret": ["is not writable"],
    }
    assert await table_state(writer.database) == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"title": None}, "title"),
        ({"title": "x", "views": True}, "views"),
        ({"title": "x", "views": "3"}, "views"),
        ({"title": "x", "price": "cheap"}, "price"),
        ({"title": "x" * 201}, "title"),
        ({"title": "x", "published_on": "2026-02-30"}, "published_on"),
        ({"title": "x", "unknown": 1}, "unknown"),
        ({"title": "x", "id": 99}, "id"),
        ({"title": "x", "featured": "yes"}, "featured"),
    ],
)
async def test_a_bad_value_is_422_naming_the_field(writer, body, field):
    before = await table_state(writer.database)
    response = await writer.client.post(API, headers=writer.headers, json=body)
    assert response.status_code == 422
    assert field in response.json()["details"]
    assert await table_state(writer.database) == before


async def test_a_required_field_present_but_empty_fails_on_patch(writer):
    before = await table_state(writer.database)
    response = await writer.client.patch(f"{API}/1", headers=writer.headers, json={"title": ""})
    assert response.status_code == 422
    assert response.json()["details"] == {"title": ["The title field is required."]}
    assert await table_state(writer.database) == before


@pytest.mark.parametrize(
    ("headers", "content", "status", "code"),
    [
        ({"content-type": "application/json"}, b"{not json", 400, "bad_request"),
        ({"content-type": "application/json"}, b"[1, 2]", 400, "bad_request"),
        ({"content-type": "application/json"}, b'"title"', 400, "bad_request"),
        ({"content-type": "application/json"}, b'{"title": NaN}', 400, "bad_request"),
        ({"content-type": "application/json"}, b'{"title": Infinity}', 400, "bad_request"),
        ({"content-type": "text/plain"}, b'{"title": "x"}', 415, "unsupported_media_type"),
        ({"content-type": "application/x-www-form-urlencoded"}, b"title=x", 415, "unsupported_media_type"),
        ({}, b'{"title": "x"}', 415, "unsupported_media_type"),
    ],
)
async def test_a_malformed_body_is_refused_and_nothing_is_written(writer, headers, content, status, code):
    before = await table_state(writer.database)
    response = await writer.client.post(API, headers={**writer.headers, **headers}, content=content)
    assert response.status_code == status
    assert response.json()["error"] == code
    assert await table_state(writer.database) == before


async def test_json_media_type_variants_are_accepted(writer):
    for media_type in ("application/json; charset=utf-8", "application/merge-patch+json", "Application/JSON"):
        response = await writer.client.post(
            API, headers={**writer.headers, "content-type": media_type}, content=b'{"title": "typed"}'
        )
        assert response.status_code == 201, media_type


async def test_a_body_over_one_mebibyte_is_413(writer):
    before = await table_state(writer.database)
    content = b'{"title": "' + b"x" * (1024 * 1024) + b'"}'
    response = await writer.client.post(
        API, headers={**writer.headers, "content-type": "application/json"}, content=content
    )
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"
    assert await table_state(writer.database) == before


async def test_unpublished_rows_can_be_neither_updated_nor_deleted(writer):
    before = await table_state(writer.database)
    assert (
        await writer.client.patch(f"{API}/5", headers=writer.headers, json={"title": "x"})
    ).status_code == 404
    assert (await writer.client.delete(f"{API}/5", headers=writer.headers)).status_code == 404
    assert (await writer.client.patch(f"{API}/abc", headers=writer.headers, json={})).status_code == 404
    assert (await writer.client.delete(f"{API}/999", headers=writer.headers)).status_code == 404
    assert await table_state(writer.database) == before


async def test_rows_outside_the_declarations_query_are_not_writable(database, host_factory):
    await create_demo(database)
    registry = ApiRegistry()
    from tests.support.demo import DECLARATIONS

    registry.register(
        "news",
        {
            **DECLARATIONS["articles"],
            "with": [],
            "query": lambda select: select.where(articles.c.category == "news"),
        },
    )
    host = await host_factory(database, registry)
    headers = host.auth(await host.token("*"))
    before = await table_state(database)
    assert (
        await host.client.patch("/api/pb/v1/objects/news/2", headers=headers, json={"title": "x"})
    ).status_code == 404
    assert (await host.client.delete("/api/pb/v1/objects/news/2", headers=headers)).status_code == 404
    assert await table_state(database) == before
    assert (
        await host.client.patch("/api/pb/v1/objects/news/1", headers=headers, json={"title": "y"})
    ).status_code == 200


async def test_a_body_may_unpublish_its_row_when_published_is_writable(writer):
    response = await writer.client.post(
        API, headers=writer.headers, json={"title": "Quiet", "published": False}
    )
    assert response.status_code == 201
    record_id = response.json()["data"]["id"]
    assert (await writer.client.get(f"{API}/{record_id}", headers=writer.headers)).status_code == 404


async def test_a_token_without_the_write_scope_gets_403_and_nothing_changes(demo):
    reader = demo.auth(await demo.token("articles.read"))
    before = await table_state(demo.database)
    response = await demo.client.post(API, headers=reader, json={"title": "x"})
    assert response.status_code == 403 and response.json()["required_scope"] == "articles.write"
    assert (await demo.client.delete(f"{API}/1", headers=reader)).status_code == 403
    assert await table_state(demo.database) == before


async def test_a_read_only_object_answers_405_to_writes(demo):
    headers = demo.auth(await demo.token("*"))
    for method, path in (
        ("POST", "/api/pb/v1/objects/authors"),
        ("PATCH", "/api/pb/v1/objects/authors/1"),
        ("DELETE", "/api/pb/v1/objects/authors/1"),
    ):
        response = await demo.client.request(method, path, headers=headers, json={"name": "x"})
        assert response.status_code == 405
        assert "GET" in response.headers["allow"]


async def test_a_declared_write_scope_replaces_the_derived_one(database, host_factory):
    await create_demo(database)
    from tests.support.demo import DECLARATIONS

    registry = ApiRegistry()
    registry.register(
        "articles", {**DECLARATIONS["articles"], "scopes": {"read": "content.read", "write": "content.edit"}}
    )
    host = await host_factory(database, registry)
    old_style = host.auth(await host.token("articles.write"))
    new_style = host.auth(await host.token("content.edit"))
    assert (await host.client.post(API, headers=old_style, json={"title": "x"})).status_code == 404
    response = await host.client.post(API, headers=new_style, json={"title": "x"})
    assert response.status_code == 201


async def test_unique_fields_are_checked_ignoring_the_row_itself(database, host_factory):
    await create_demo(database)
    from tests.support.demo import DECLARATIONS

    registry = ApiRegistry()
    registry.register("articles", {**DECLARATIONS["articles"], "rules": {"title": "required|string|unique"}})
    host = await host_factory(database, registry)
    headers = host.auth(await host.token("*"))
    before = await table_state(database)
    taken = await host.client.post(API, headers=headers, json={"title": "Hello world"})
    assert taken.status_code == 422
    assert list(taken.json()["details"]) == ["title"]
    assert await table_state(database) == before
    same_row = await host.client.patch(f"{API}/1", headers=headers, json={"title": "Hello world"})
    assert same_row.status_code == 200
    other_row = await host.client.patch(f"{API}/2", headers=headers, json={"title": "Hello world"})
    assert other_row.status_code == 422


async def test_a_value_the_database_refuses_is_422_not_500(database, host_factory):
    await create_demo(database)
    host = await host_factory(database, demo_registry())
    headers = host.auth(await host.token("*"))
    before = await table_state(database)
    response = await host.client.post(API, headers=headers, json={"title": "x", "author_id": 999})
    if database.url.dialect == "sqlite":  # SQLite enforces foreign keys only when the host turns them on
        assert response.status_code == 201
        return
    assert response.status_code == 422
    assert "author_id" in response.json()["details"]
    assert await table_state(database) == before


async def test_deleting_a_row_other_rows_reference_is_422_naming_the_record(database, host_factory):
    await create_demo(database)
    host = await host_factory(database, demo_registry())
    headers = host.auth(await host.token("*"))
    before = await table_state(database)
    response = await host.client.delete(f"{API}/1", headers=headers)  # comments 1-3 reference article 1
    if database.url.dialect == "sqlite":  # SQLite enforces foreign keys only when the host turns them on
        assert response.status_code == 204
        return
    assert response.status_code == 422
    assert response.json()["details"] == {"id": ["The record is still referenced by other records."]}
    assert await table_state(database) == before


GUESTS = sa.Table(  # shaped as the demo's authors, under another name
    "test_write_guests",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("email", sa.String(200), nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)


async def test_writes_reach_the_table_the_declaration_names_after_it_changes(database, host_factory):
    """A write's SQL is kept per object version (docs/performance.md): once the object is declared on
    another table, the same create, update and delete reach that table and leave the first alone."""
    from sqlalchemy.schema import CreateTable

    from pb_headless.database.dialect import dialect_of

    await create_demo(database)
    await database.execute(str(CreateTable(GUESTS).compile(dialect=dialect_of(database))))
    people = "/api/pb/v1/objects/people"
    declaration = {
        "model": authors,
        "fields": ["name"],
        "writable": ["name"],
        "operations": ["list", "show", "create", "update", "delete"],
    }
    registry = ApiRegistry()
    registry.register("people", declaration)
    host = await host_factory(database, registry)
    headers = host.auth(await host.token("*"))
    for _ in range(2):  # the second round runs the kept statements
        created = await host.client.post(people, headers=headers, json={"name": "Ann"})
        assert created.status_code == 201, created.text
        address = f"{people}/{created.json()['data']['id']}"
        assert (await host.client.patch(address, headers=headers, json={"name": "Bo"})).status_code == 200
        assert (await host.client.delete(address, headers=headers)).status_code == 204
    before = [
        dict(row._mapping) for row in await database.fetch_all(sa.select(authors).order_by(authors.c.id))
    ]

    registry.register("people", {**declaration, "model": GUESTS})
    created = await host.client.post(people, headers=headers, json={"name": "Cy"})
    assert created.status_code == 201, created.text
    address = f"{people}/{created.json()['data']['id']}"
    updated = await host.client.patch(address, headers=headers, json={"name": "Di"})
    assert updated.status_code == 200 and updated.json()["data"]["name"] == "Di"
    guests = [row._mapping["name"] for row in await database.fetch_all(sa.select(GUESTS))]
    assert guests == ["Di"]
    assert (await host.client.delete(address, headers=headers)).status_code == 204
    assert await database.fetch_all(sa.select(GUESTS)) == []
    after = [
        dict(row._mapping) for row in await database.fetch_all(sa.select(authors).order_by(authors.c.id))
    ]
    assert after == before


# The data version moves in the write's own commit (docs/writes.md): a database that refuses the move
# refuses the write. On SQLite the move and the COMMIT go to the connection's thread together.
async def test_a_write_whose_data_version_cannot_move_is_a_500_and_writes_nothing(writer):
    created = await writer.client.post(API, headers=writer.headers, json={"title": "Before"})
    assert created.status_code == 201
    address = created.headers["location"]
    before = await table_state(writer.database)
    async with updates_refused(writer.database, "pb_state", where_id=2):  # row 2: the data version
        answers = [
            await writer.client.post(API, headers=writer.headers, json={"title": "Never"}),
            await writer.client.patch(address, headers=writer.headers, json={"title": "Never"}),
            await writer.client.delete(address, headers=writer.headers),
        ]
    for answer in answers:
        assert answer.status_code == 500 and answer.json()["error"] == "server_error"
        assert "injected" not in answer.text and "pb_state" not in answer.text
    assert await table_state(writer.database) == before
    again = await writer.client.patch(address, headers=writer.headers, json={"title": "After"})
    assert again.status_code == 200 and again.json()["data"]["title"] == "After"
