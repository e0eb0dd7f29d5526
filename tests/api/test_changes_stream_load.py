"""docs/changes.md, "What the streams of an instance may take": the instance's whole bound of streams
replaying a backlog while writes go on leaves /health and a cheap list within 3× their control.

The attack of issue 34: streams catching up on the log took 19 of 20 CPU-seconds and pushed a cheap
list's p50 from 3 ms to 3.7 s. Here one uvicorn process serves 100 streams (its bound, from 20 tokens),
each replaying 200 entries, while a client writes 4 rows a second; a probe times /health and a
one-row list, before the streams open (control), while they replay, and after they closed (control
again). The streams are read in a thread of their own, so that the probe's timings are the server's.
"""

from __future__ import annotations

import asyncio
import selectors
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field

import httpx
import pytest

from tests.support.demo import articles
from tests.support.server import answers, free_port, log_tail, running, uvicorn_command, wait_until

pytestmark = pytest.mark.slow

STREAMS = 100  # the instance's bound (HeadlessAPI's max_streams)
BACKLOG = 200  # entries each stream replays
PROBES = 150  # timed requests of each kind per phase
FACTOR = 3.0
OBJECTS = "/api/pb/v1/objects/articles"


@dataclass
class Listeners:
    """Stream connections on plain sockets, read (and dropped) by one thread; counts the events."""

    port: int
    events: int = 0
    socks: list[socket.socket] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def open(self, path: str, headers: dict[str, str]) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{lines}\r\n".encode())
        head = b""
        while b"stream open" not in head:
            head += sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 200 "), head[:300]
        sock.setblocking(False)
        self.socks.append(sock)

    def read(self) -> None:
        selector = selectors.DefaultSelector()
        for sock in self.socks:
            selector.register(sock, selectors.EVENT_READ)
        while not self.stop.is_set():
            for key, _ in selector.select(0.1):
                chunk = key.fileobj.recv(65536)  # type: ignore[union-attr]
                self.events += chunk.count(b"\nid: ")
                if not chunk:
                    selector.unregister(key.fileobj)
        for sock in self.socks:
            sock.close()


def medians(client: httpx.Client, headers: dict[str, str]) -> tuple[float, float]:
    """Median seconds of /health and of a one-row list, taking turns."""
    health, listed = [], []
    for _ in range(PROBES):
        started = time.perf_counter()
        assert client.get("/api/pb/v1/health").status_code == 200
        health.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert client.get(f"{OBJECTS}?limit=1&count=none", headers=headers).status_code == 200
        listed.append(time.perf_counter() - started)
    return statistics.median(health), statistics.median(listed)


def writing(base: str, headers: dict[str, str], stop: threading.Event) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        number = 0
        while not stop.wait(0.25):
            number += 1
            answer = client.post(OBJECTS, json={"title": f"written {number}"}, headers=headers)
            assert answer.status_code == 201, answer.text


async def test_the_bound_of_streams_replaying_a_backlog_leaves_health_and_a_list_within_3x(demo, tmp_path):
    readers = [demo.auth(await demo.token("articles.read")) for _ in range(STREAMS // 5)]
    writer = demo.auth(await demo.token("articles.read,articles.write"))
    port = free_port()
    log = tmp_path / "uvicorn.log"
    environment = {"PB_TEST_SERVER_DATABASE": str(demo.database.url), "PB_TEST_RATE_LIMIT": "1000000"}
    with running(uvicorn_command("tests.servers.changes_app:app", port), environment, log) as process:
        base = f"http://127.0.0.1:{port}"
        await asyncio.to_thread(wait_until, process, log, lambda: answers(base + "/ready"))
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            since = (await client.get("/api/pb/v1/changes/articles", headers=writer)).json()["meta"]["next"]
        rows = [{"id": key, "title": f"row {key}", "published": True} for key in range(1000, 1000 + BACKLOG)]
        async with demo.database.transaction():
            await demo.database.execute_many(articles.insert(), rows)
        phases = await asyncio.to_thread(measure, base, port, since, readers, writer)
    control = [(a + b) / 2 for a, b in zip(phases["before"], phases["after"], strict=True)]
    loaded = phases["streams"]
    report = f"control {control}, with the streams {loaded} (s); {phases['events']}; {log_tail(log, 1000)}"
    assert loaded[0] <= FACTOR * control[0], f"/health: {report}"
    assert loaded[1] <= FACTOR * control[1], f"the list: {report}"
    done, during, total = phases["events"]
    assert during > 0 and done < total, f"the streams were not replaying while measured: {report}"


def measure(base: str, port: int, since: str, readers: list[dict[str, str]], writer: dict[str, str]) -> dict:
    stop_writing = threading.Event()
    writes = threading.Thread(target=writing, args=(base, writer, stop_writing))
    writes.start()
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            phases: dict = {"before": medians(client, writer)}
            listeners = Listeners(port)
            for headers in readers:
                for _ in range(5):
                    listeners.open(f"/api/pb/v1/changes/articles/stream?since={since}", headers)
            reading = threading.Thread(target=listeners.read)
            reading.start()
            started = listeners.events
            phases["streams"] = medians(client, writer)
            phases["events"] = (listeners.events, listeners.events - started, STREAMS * BACKLOG)
            listeners.stop.set()
            reading.join()
            time.sleep(1)  # the server notices the closed streams
            phases["after"] = medians(client, writer)
    finally:
        stop_writing.set()
        writes.join()
    return phases
