"""docs/changes.md: `GET /changes/{name}/stream` sends the feed's entries as server-sent events as they
commit, resumes after `Last-Event-ID` with nothing lost and nothing twice, and ends when it must."""

from __future__ import annotations

import asyncio
import json
import signal
import socket

import httpx
import pytest

from pb_headless.changes import stream as stream_module
from tests.support.demo import articles, create_demo, demo_registry
from tests.support.live import Event, event_stream, serving
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


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_client_that_stops_reading_is_cut_off_and_a_fresh_one_resumes_where_it_ended(demo, tmp_path):
    """A client that opens the stream and then reads nothing while 10 MB of changes commit: the
    server stops writing to it once its buffer is full, ends the stream after SEND_TIMEOUT (one second
    here) and frees its place; the client then finds the end of the connection after less than all of
    it, and a fresh client resuming with Last-Event-ID has every change exactly once."""
    plain = await demo.token("articles.read")
    port = free_port()
    log = tmp_path / "uvicorn.log"
    environment = {"PB_TEST_SERVER_DATABASE": str(demo.database.url), "PB_TEST_STREAM_SEND_TIMEOUT": "1"}
    rows = [
        {"id": key, "title": f"row {key}", "body": "x" * 4000, "published": True} for key in range(1000, 3500)
    ]
    with running(uvicorn_command("tests.servers.changes_app:app", port), environment, log) as process:
        base = f"http://127.0.0.1:{port}"
        await asyncio.to_thread(wait_until, process, log, lambda: answers(base + "/ready"))
        slow = await asyncio.to_thread(open_without_reading, port, STREAM, demo.auth(plain))
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            assert (await client.get("/streams")).text == "1"
            async with demo.database.transaction():
                await demo.database.execute_many(articles.insert(), rows)  # 10 MB of events
            await until_no_stream_is_open(client)
            held = await asyncio.to_thread(read_to_the_end, slow)  # what the server held, then the end
            received = events_in(held)
            resumed = {**demo.auth(plain), "Last-Event-ID": received[-1].id}
            async with event_stream(client, STREAM, resumed) as events:
                received += await events.take(len(rows) - len(received))
    assert 0 < len(events_in(held)) < len(rows) and len(held) < len(rows) * 4000 // 2, len(held)
    assert [event.data["id"] for event in received] == [row["id"] for row in rows], log_tail(log)


def open_without_reading(port: int, path: str, headers: dict[str, str]) -> socket.socket:
    """A stream request on a plain socket with a small receive buffer, read up to the stream's opening
    comment and then left alone (an asyncio reader would go on reading into memory by itself)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: the window stays small
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{lines}\r\n".encode())
    head = b""
    while not head.endswith(b"stream open\n\n\r\n"):
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 200 "), head
    return sock


def read_to_the_end(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout if it never does)."""
    sock.settimeout(30)
    received = []
    while chunk := sock.recv(65536):
        received.append(chunk)
    sock.close()
    return b"".join(received)


async def until_no_stream_is_open(client: httpx.AsyncClient, bound: float = 60) -> None:
    for _ in range(int(bound / 0.1)):
        if (await client.get("/streams")).text == "0":
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the stream of the client that reads nothing was still open after {bound:.0f} s")


def events_in(raw: bytes) -> list[Event]:
    """The whole events in a raw chunked body (a chunk's size line is not part of any event line)."""
    found = []
    for block in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        fields = dict(
            line.decode().split(": ", 1)
            for line in block.split(b"\n")
            if line[:4] in (b"even", b"id: ", b"data")
        )
        if {"event", "id", "data"} <= set(fields):
            found.append(Event(fields["event"], fields["id"], json.loads(fields["data"])))
    return found
