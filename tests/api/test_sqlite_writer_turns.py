"""Writers of several processes on one SQLite file take turns on a lock file beside it
(`<file>-pbwriters`, pb_headless/database/sqlite/writer_turns.py, docs/deployment.md "SQLite"): a
write waits while another process holds the turn and goes on the moment it is let go, a write that
gives up waiting leaves the turn free, and where the file cannot be opened writes go on without it."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import sqlalchemy as sa

from tests.support.demo import articles, create_demo, demo_registry
from tests.support.server import answers, free_port, running, uvicorn_command, wait_until

URL = "/api/pb/v1/objects/articles"


def turns_file(database) -> Path:
    return Path(str(database.url).removeprefix("sqlite:///") + "-pbwriters")


@contextlib.contextmanager
def turn_held_elsewhere(path: Path) -> Iterator[None]:
    """The turn, held on an open file of its own, as another process's writer would hold it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def turn_is_free(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


async def titles(database) -> list[str]:
    return [row[0] for row in await database.fetch_all(sa.select(articles.c.title).order_by(articles.c.id))]


async def test_a_write_waits_for_the_turn_another_process_holds_and_goes_on_when_it_is_let_go(
    sqlite_database, host_factory
):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    headers = host.auth(await host.token("*"))
    first = await host.client.post(URL, json={"title": "before"}, headers=headers)
    assert first.status_code == 201, first.text
    path = turns_file(sqlite_database)
    assert path.exists()
    with turn_held_elsewhere(path):
        write = asyncio.ensure_future(host.client.post(URL, json={"title": "waited"}, headers=headers))
        await asyncio.sleep(0.5)
        assert not write.done()  # SQLite's own lock is free: only the turn holds it back
        assert "waited" not in await titles(sqlite_database)
    answer = await asyncio.wait_for(write, 5)
    assert answer.status_code == 201, answer.text
    assert (await titles(sqlite_database))[-1] == "waited"
    assert turn_is_free(path)


async def impatient_site(database, host_factory):
    """A site whose writes give up after half a second, one write made (the turns file is there)."""
    await create_demo(database)
    host = await host_factory(database, demo_registry(), database_timeout=0.5)
    headers = host.auth(await host.token("*"))
    assert (await host.client.post(URL, json={"title": "first"}, headers=headers)).status_code == 201
    return host, headers, turns_file(database)


async def test_a_write_that_gives_up_waiting_leaves_the_turn_free_for_the_next(sqlite_database, host_factory):
    host, headers, path = await impatient_site(sqlite_database, host_factory)
    with turn_held_elsewhere(path):
        gave_up = await host.client.post(URL, json={"title": "gave up"}, headers=headers)
    assert gave_up.status_code == 503, gave_up.text
    assert gave_up.json()["error"] == "service_unavailable", gave_up.text
    # The wait on its thread ends as the turn is let go; nobody took it over, so it is let go at once.
    for _ in range(50):
        if turn_is_free(path):
            break
        await asyncio.sleep(0.02)
    assert turn_is_free(path)
    assert "gave up" not in await titles(sqlite_database)
    after = await host.client.post(URL, json={"title": "after"}, headers=headers)
    assert after.status_code == 201, after.text
    assert (await titles(sqlite_database))[-1] == "after"


async def test_a_write_given_up_while_waiting_hands_its_wait_to_the_next_writer(
    sqlite_database, host_factory
):
    host, headers, path = await impatient_site(sqlite_database, host_factory)
    with turn_held_elsewhere(path):
        assert (await host.client.post(URL, json={"title": "gave up"}, headers=headers)).status_code == 503
        late = asyncio.ensure_future(host.client.post(URL, json={"title": "took over"}, headers=headers))
        await asyncio.sleep(0.1)
    answer = await asyncio.wait_for(late, 5)
    assert answer.status_code == 201, answer.text
    assert "gave up" not in await titles(sqlite_database)
    assert (await titles(sqlite_database))[-1] == "took over"
    assert turn_is_free(path)


async def test_writes_go_on_without_turns_where_the_turns_file_cannot_be_opened(
    sqlite_database, host_factory, caplog
):
    await create_demo(sqlite_database)
    turns_file(sqlite_database).mkdir()  # a folder where the file would be: it cannot be opened
    host = await host_factory(sqlite_database, demo_registry())
    headers = host.auth(await host.token("*"))
    with caplog.at_level(logging.WARNING, logger="pb_headless"):
        for title in ("one", "two"):
            answer = await host.client.post(URL, json={"title": title}, headers=headers)
            assert answer.status_code == 201, answer.text
    assert (await titles(sqlite_database))[-2:] == ["one", "two"]
    warnings = [record.getMessage() for record in caplog.records if "take turns" in record.getMessage()]
    assert len(warnings) == 1, warnings  # said once, not on every write
    assert "-pbwriters" in warnings[0]


async def test_two_worker_processes_writing_at_once_store_exactly_what_they_acknowledged(
    sqlite_database, host_factory
):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    plain = await host.token("*")
    port = free_port()
    env = {"PB_DATABASE_URL": str(sqlite_database.url), "PB_RATE_LIMIT": "100000"}
    command = [*uvicorn_command("tests.support.demo_app:app", port), "--workers", "2"]
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "uvicorn.log"
        with running(command, env, log) as process:
            base = f"http://127.0.0.1:{port}"
            wait_until(process, log, lambda: answers(base + "/api/pb/v1/health"))
            acknowledged = await _creates(base, plain, clients=8, each=25)
    stored = set(await titles(sqlite_database))
    assert len(acknowledged) == 200
    assert acknowledged <= stored
    assert turn_is_free(turns_file(sqlite_database))


async def _creates(base: str, plain: str, *, clients: int, each: int) -> set[str]:
    made: set[str] = set()

    async def client(number: int) -> None:
        # A new connection per request spreads the writes over both workers.
        for request in range(each):
            title = f"client {number} write {request}"
            async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                answer = await http.post(
                    URL, json={"title": title}, headers={"Authorization": f"Bearer {plain}"}
                )
            assert answer.status_code == 201, answer.text
            made.add(title)

    await asyncio.gather(*(client(number) for number in range(clients)))
    return made
