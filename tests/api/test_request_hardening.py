"""What a hostile or careless client cannot do (docs/hardening.md): tell bad tokens apart, smuggle a
second credential, address one record by many ids, write a row the object no longer serves, read
through a write, break `unique` by racing, or crash the API with an odd Content-Length or a hang-up."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from databases import Database

from pb_headless import ApiRegistry, install
from pb_headless.database.dialect import dialect_of
from tests.support.databases import until_in_processlist
from tests.support.demo import articles, create_demo, demo_registry

# -- tokens ------------------------------------------------------------------------------------


async def test_every_bad_token_gets_one_and_the_same_401_body(sqlite_database, host_factory):
    await create_demo(sqlite_database)
    users = {"7": {"id": 7, "username": "kept"}}
    host = await host_factory(sqlite_database, demo_registry(), user_loader=users.get)
    await host.token("*", name="live")
    disabled = await host.token("*", name="disabled")
    await host.tokens.disable("disabled")
    soon = await host.token("*", name="soon", expires_at=datetime.now(UTC) + timedelta(seconds=1))
    reissued = await host.token("*", name="reissued")
    await host.tokens.reissue("reissued")
    orphaned = await host.token("*", name="orphaned", user_id="7")
    del users["7"]
    await asyncio.sleep(1.1)  # `soon` expires
    unknown = "pb_" + "A" * 46
    bodies = []
    for plain in (unknown, disabled, soon, reissued, orphaned, "not-even-a-token"):
        response = await host.client.get("/api/pb/v1/me", headers=host.auth(plain))
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == 'Bearer realm="pb_headless"'
        bodies.append(response.content)
    assert len(set(bodies)) == 1
    missing = await host.client.get("/api/pb/v1/me")
    assert missing.status_code == 401 and missing.content != bodies[0]


@pytest.mark.parametrize("header", ["Authorization", "X-API-Key"])
async def test_two_headers_of_one_kind_are_a_400(demo, header):
    plain = await demo.token("*")
    value = f"Bearer {plain}" if header == "Authorization" else plain
    response = await demo.client.get("/api/pb/v1/me", headers=[(header, value), (header, value)])
    assert response.status_code == 400 and response.json()["error"] == "bad_request"


# -- addressing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("written", ["01", "+1", "%201", "1%20", "1.0", "0x1"])
async def test_a_record_is_addressed_only_by_its_canonical_id(demo, written):
    plain = await demo.token("*")
    assert (
        await demo.client.get("/api/pb/v1/objects/articles/1", headers=demo.auth(plain))
    ).status_code == 200
    for method in ("GET", "PATCH", "DELETE"):
        response = await demo.client.request(
            method,
            f"/api/pb/v1/objects/articles/{written}",
            json={"title": "x"} if method == "PATCH" else None,
            headers=demo.auth(plain),
        )
        assert response.status_code == 404, (method, written)
        assert response.json()["error"] == "not_found"
    row = await demo.database.fetch_one(sa.select(articles.c.title).where(articles.c.id == 1))
    assert row[0] == "Hello world"


@pytest.mark.parametrize(
    "path",
    ["objects/articles/%0Ax", "objects/articles/1%0A", "objects/art%0Aicles", "%0A", "me%0D%0A", "x%00y"],
)
async def test_a_path_with_a_control_character_is_answered_with_the_api_envelope(
    sqlite_database, host_factory, path
):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    plain = await host.token("*")
    without = await host.client.get(f"/api/pb/v1/{path}")
    assert without.status_code == 401 and without.json()["error"] == "unauthorized"
    answer = await host.client.get(f"/api/pb/v1/{path}", headers=host.auth(plain))
    assert answer.status_code == 404 and answer.headers["content-type"] == "application/json"
    assert answer.json()["error"] in ("not_found", "unknown_object")
    assert "x-ratelimit-limit" in answer.headers


async def test_links_keep_the_query_as_the_client_wrote_it(demo):
    plain = await demo.token("*")
    query = "filter[created_at][gte]=2026-01-02T00:00:00&sort=-created_at&limit=2&utm=a%3Ab"
    body = (await demo.client.get(f"/api/pb/v1/objects/articles?{query}", headers=demo.auth(plain))).json()
    assert body["links"]["self"] == f"http://testserver/api/pb/v1/objects/articles?{query}"
    assert body["links"]["next"] == f"http://testserver/api/pb/v1/objects/articles?{query}&offset=2"


# -- writes ------------------------------------------------------------------------------------


async def test_a_write_only_token_learns_only_the_key_of_what_it_wrote(demo):
    plain = await demo.token("articles.write")
    created = await demo.client.post(
        "/api/pb/v1/objects/articles", json={"title": "blind", "body": "secret"}, headers=demo.auth(plain)
    )
    assert created.status_code == 201
    assert list(created.json()["data"]) == ["id"]
    new_id = created.json()["data"]["id"]
    assert created.headers["location"].endswith(f"/objects/articles/{new_id}")
    updated = await demo.client.patch(
        f"/api/pb/v1/objects/articles/{new_id}", json={"body": "more"}, headers=demo.auth(plain)
    )
    assert updated.status_code == 200 and updated.json() == {"data": {"id": new_id}}


async def test_a_row_created_unpublished_answers_201_without_a_location(demo):
    plain = await demo.token("*")
    created = await demo.client.post(
        "/api/pb/v1/objects/articles", json={"title": "draft", "published": False}, headers=demo.auth(plain)
    )
    assert created.status_code == 201, created.text
    assert "location" not in created.headers
    new_id = created.json()["data"]["id"]
    row = await demo.database.fetch_one(sa.select(articles.c.published).where(articles.c.id == new_id))
    assert row is not None and not row[0]


async def test_a_row_unpublished_while_the_body_arrives_is_not_written(demo):
    plain = await demo.token("*")
    halfway = asyncio.Event()
    go_on = asyncio.Event()

    async def body():
        yield b'{"title": '
        halfway.set()
        await go_on.wait()
        yield b'"rewritten"}'

    patch = asyncio.ensure_future(
        demo.client.patch(
            "/api/pb/v1/objects/articles/1",
            content=body(),
            headers={**demo.auth(plain), "Content-Type": "application/json", "Content-Length": "23"},
        )
    )
    await halfway.wait()
    await demo.database.execute(articles.update().where(articles.c.id == 1).values(published=False))
    go_on.set()
    response = await patch
    assert response.status_code == 404
    row = await demo.database.fetch_one(sa.select(articles.c.title).where(articles.c.id == 1))
    assert row[0] == "Hello world"


slugs = sa.MetaData()
tags = sa.Table(
    "hardening_tags",
    slugs,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("slug", sa.String(50), nullable=False),
)
indexed_tags = sa.Table(
    "hardening_indexed_tags",
    slugs,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("slug", sa.String(50), nullable=False, unique=True),
)


def tags_registry(table: sa.Table) -> ApiRegistry:
    registry = ApiRegistry()
    registry.register(
        "tags",
        {
            "model": table,
            "fields": ["slug"],
            "operations": ["list", "create"],
            "writable": ["slug"],
            "rules": {"slug": "required|string|unique"},
        },
    )
    return registry


@pytest.mark.parametrize("table", [tags, indexed_tags], ids=["without-index", "with-unique-index"])
async def test_unique_holds_when_twenty_clients_race_for_one_value(database, host_factory, table):
    ddl = sa.schema.CreateTable(table, if_not_exists=True).compile(dialect=dialect_of(database))
    await database.execute(str(ddl))
    host = await host_factory(database, tags_registry(table))
    plain = await host.token("*")
    answers = await asyncio.gather(
        *(
            host.client.post("/api/pb/v1/objects/tags", json={"slug": "same"}, headers=host.auth(plain))
            for _ in range(20)
        )
    )
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [201] + [422] * 19, [a.text for a in answers if a.status_code not in (201, 422)]
    refused = next(answer for answer in answers if answer.status_code == 422).json()
    assert list(refused["details"]) == ["slug"]
    assert await database.fetch_val(sa.select(sa.func.count()).select_from(table)) == 1


@contextlib.asynccontextmanager
async def another_site_database(database: Database) -> AsyncIterator[Database]:
    """Another database on the same MariaDB server, installed, as another site's would be."""
    name = f"{database.url.database}_other"
    url = str(database.url.replace(database=name))
    await database.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    other = Database(url)
    try:
        await other.connect()
        await install(other)
        yield other
    finally:
        await other.disconnect()
        await database.execute(f"DROP DATABASE {name}")


async def test_a_writer_held_up_in_one_database_does_not_hold_up_another_databases_writers(
    mariadb_database, host_factory
):
    """MariaDB's named locks belong to the server: the lock a `unique` field's writers take turns on
    is named for the database too, so two sites on one server (a table and field of the same name)
    never wait for each other; before, the second waited for the first until the 503 of its limit."""
    async with another_site_database(mariadb_database) as elsewhere:
        sites = []
        for database in (mariadb_database, elsewhere):
            ddl = sa.schema.CreateTable(tags, if_not_exists=True).compile(dialect=dialect_of(database))
            await database.execute(str(ddl))
            host = await host_factory(database, tags_registry(tags))
            sites.append((host, host.auth(await host.token("*"))))
        (here, here_auth), (there, there_auth) = sites
        address = "/api/pb/v1/objects/tags"
        for host, auth in sites:  # the first request installs the change log's triggers on the table
            assert (await host.client.get(address, headers=auth)).status_code == 200
        blocker = Database(str(mariadb_database.url))
        await blocker.connect()
        try:
            async with blocker.connection() as connection:
                await connection.execute(f"LOCK TABLES {tags.name} WRITE")  # here, writers of tags wait
                first = here.client.post(address, json={"slug": "a"}, headers=here_auth)
                stuck = asyncio.ensure_future(first)
                # until it waits on the table, holding its turn for `slug`
                waiting = f"state LIKE 'Waiting for table%' AND info LIKE '%{tags.name}%'"
                await until_in_processlist(mariadb_database, waiting, "the first writer's wait")
                answer = await there.client.post(address, json={"slug": "a"}, headers=there_auth)
                assert answer.status_code == 201, answer.text
                assert not stuck.done()
                await connection.execute("UNLOCK TABLES")
            assert (await stuck).status_code == 201
        finally:
            await blocker.disconnect()
        for database in (mariadb_database, elsewhere):
            assert await database.fetch_val(sa.select(sa.func.count()).select_from(tags)) == 1


# -- transport ------------------------------------------------------------------------------------


async def call(app, scope_extra: dict, messages: list[dict]) -> tuple[int | None, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "scheme": "http",
        "server": ("testserver", 80),
        "client": ("203.0.113.9", 4000),
        "root_path": "",
        "query_string": b"",
        **scope_extra,
    }
    inbox = list(messages)
    sent: list[dict] = []

    async def receive():
        return inbox.pop(0) if inbox else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    status = next((m["status"] for m in sent if m["type"] == "http.response.start"), None)
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


@pytest.mark.parametrize("length", ["²", "1" * 5000, "-1", "1e3"])
async def test_an_odd_content_length_is_a_400(demo, length):
    plain = await demo.token("*")
    headers = [
        (b"authorization", f"Bearer {plain}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", length.encode()),
        (b"host", b"testserver"),
    ]
    status, body = await call(
        demo.app,
        {
            "method": "POST",
            "path": "/api/pb/v1/objects/articles",
            "raw_path": b"/api/pb/v1/objects/articles",
            "headers": headers,
        },
        [{"type": "http.request", "body": b'{"title":"x"}', "more_body": False}],
    )
    assert status == 400 and b'"bad_request"' in body


async def test_a_client_that_hangs_up_is_one_log_line_not_a_failure(demo, caplog):
    plain = await demo.token("*")
    headers = [
        (b"authorization", f"Bearer {plain}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", b"100"),
        (b"host", b"testserver"),
    ]
    with caplog.at_level(logging.DEBUG, logger="pb_headless"):
        status, _ = await call(
            demo.app,
            {
                "method": "POST",
                "path": "/api/pb/v1/objects/articles",
                "raw_path": b"/api/pb/v1/objects/articles",
                "headers": headers,
            },
            [{"type": "http.request", "body": b'{"ti', "more_body": True}],
        )
    assert status is None  # nobody is left to answer
    records = [record for record in caplog.records if record.name == "pb_headless"]
    assert len(records) == 1 and "disconnected" in records[0].getMessage()
    assert records[0].levelno < logging.WARNING and records[0].exc_info is None
    assert await demo.database.fetch_val(sa.select(sa.func.count()).select_from(articles)) == 7
