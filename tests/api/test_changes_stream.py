"""docs/changes.md: `GET /changes/{name}/stream` sends the feed's entries as server-sent events as they
commit, resumes after `Last-Event-ID` with nothing lost and nothing twice, and ends when it must."""

from __future__ import annotations

import asyncio
import signal

import httpx
import pytest

from pb_headless.changes import stream as stream_module
from tests.support.demo import articles, create_demo, demo_registry
from tests.support.live import event_stream, serving
from tests.support.server import answers, free_port, log_tail, running, uvicorn_command, wait_until

STREAM = "/api/pb/v1/changes/articles/stream"


@pytest.fixture
async def live(demo):
    demo.headers = demo.auth(await demo.token("articles.read,articles.write"))
    async with serving(demo.app) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
        demo.http = client
        yield demo


async def test_writes_through_the_api_site_code_and_plain_sql_arrive_once_each(live):
    async with event_stream(live.http, STREAM, live.headers) as events:
        await events.opened()
        address = "/api/pb/v1/objects/articles"
        created = await live.http.post(address, json={"title": "API"}, headers=live.headers)
        assert created.status_code == 201, created.text
        await live.database.execute(articles.insert().values(id=60, title="Site code", published=True))
        plain_sql = "INSERT INTO demo_articles (id, title, published) VALUES (61, 'SQL', TRUE)"
        await live.database.execute(plain_sql)
        received = await events.take(3)
    assert [(event.event, event.data["id"]) for event in received] == [
        ("upsert", created.json()["data"]["id"]),
        ("upsert", 60),
        ("upsert", 61),
    ]
    assert [event.id for event in received] == [event.data["cursor"] for event in received]
    assert received[2].data["record"]["title"] == "SQL"


async def test_a_client_cut_off_during_100_writes_resumes_with_last_event_id_and_has_each_once(live):
    received = []

    async def write() -> None:
        for key in range(200, 300):
            await live.database.execute(articles.insert().values(id=key, title=f"row {key}", published=True))

    async with event_stream(live.http, STREAM, live.headers) as events:
        await events.opened()
        writer = asyncio.create_task(write())
        received += await events.take(30)
    await writer  # the rest was written while no client listened
    resumed = {**live.headers, "Last-Event-ID": received[-1].id}
    async with event_stream(live.http, STREAM, resumed) as events:
        received += await events.take(70)
    keys = [event.data["id"] for event in received]
    assert keys == list(range(200, 300))


async def test_since_starts_the_stream_after_that_cursor(live):
    start = (await live.http.get("/api/pb/v1/changes/articles", headers=live.headers)).json()["meta"]["next"]
    await live.database.execute(articles.update().where(articles.c.id == 2).values(title="Before the stream"))
    async with event_stream(live.http, f"{STREAM}?since={start}&fields=title", live.headers) as events:
        (event,) = await events.take(1)
    assert event.data["record"] == {"id": 2, "title": "Before the stream"}


async def test_two_instances_on_one_database_see_each_others_writes(database, host_factory):
    await create_demo(database)
    first = await host_factory(database, demo_registry())
    second = await host_factory(database, demo_registry())
    headers = first.auth(await first.token("articles.read,articles.write"))
    async with (
        serving(first.app) as base,
        httpx.AsyncClient(base_url=base, timeout=30) as client,
        event_stream(client, STREAM, headers) as events,
    ):
        await events.opened()
        written = await second.client.post(
            "/api/pb/v1/objects/articles", json={"title": "From the other instance"}, headers=headers
        )
        assert written.status_code == 201, written.text
        (event,) = await events.take(1)
    assert event.data["record"]["title"] == "From the other instance"


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_sixth_stream_of_one_token_is_refused_with_429(live):
    async with (
        event_stream(live.http, STREAM, live.headers) as one,
        event_stream(live.http, STREAM, live.headers) as two,
        event_stream(live.http, STREAM, live.headers) as three,
        event_stream(live.http, STREAM, live.headers) as four,
        event_stream(live.http, STREAM, live.headers) as five,
    ):
        for events in (one, two, three, four, five):
            await events.opened()
        refused = await live.http.get(STREAM, headers=live.headers)
        assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
        other = live.auth(await live.token("articles.read"))
        async with event_stream(live.http, STREAM, other) as events:
            await events.opened()


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_disabled_tokens_stream_ends_and_a_quiet_one_gets_heartbeats(live, monkeypatch):
    monkeypatch.setattr(stream_module, "RECHECK", 0.3)
    monkeypatch.setattr(stream_module, "HEARTBEAT", 0.1)
    plain = await live.token("articles.read", name="soon-disabled")
    async with event_stream(live.http, STREAM, live.auth(plain)) as events:
        await events.opened()
        while (item := await events.item(timeout=5)) != "keep-alive":
            assert isinstance(item, str), item  # a quiet stream sends only comments
        await live.tokens.disable("soon-disabled")
        assert await events.next() is None  # the stream ended


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_stream_cursors_that_do_not_decode_are_422_and_objects_it_cannot_read_are_404(live):
    bad = await live.http.get(STREAM, headers={**live.headers, "Last-Event-ID": "garbage"})
    assert bad.status_code == 422 and list(bad.json()["details"]) == ["Last-Event-ID"]
    unknown = await live.http.get("/api/pb/v1/changes/secrets/stream", headers=live.headers)
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown_object"


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_uvicorn_stops_on_sigterm_while_a_stream_is_open(demo, tmp_path):
    plain = await demo.token("articles.read")
    port = free_port()
    log = tmp_path / "uvicorn.log"
    command = uvicorn_command("tests.servers.changes_app:app", port)
    with running(command, {"PB_TEST_SERVER_DATABASE": str(demo.database.url)}, log) as process:
        base = f"http://127.0.0.1:{port}"
        await asyncio.to_thread(wait_until, process, log, lambda: answers(base + "/ready"))
        async with (
            httpx.AsyncClient(base_url=base, timeout=30) as client,
            event_stream(client, STREAM, demo.auth(plain)) as events,
        ):
            await events.opened()
            process.send_signal(signal.SIGTERM)
            assert await events.next() is None  # the server ended the stream
            code = await asyncio.to_thread(process.wait, 20)
    # uvicorn ends a graceful shutdown by raising the signal it caught again: -15 is that exit.
    assert code in (0, -signal.SIGTERM), log_tail(log)
