"""What filtered streams cost (docs/changes.md, "Filtered changes"): many streams with different
filters while writes commit.

    .venv/bin/python -m bench.filtered_streams [--database sqlite|postgresql|mariadb]
        [--streams 100] [--rate 100] [--seconds 20] [--rows 20000] [--updates 0.5]

One uvicorn process serves the API (its own process, so that its CPU time is its own). The table
holds `--rows` rows; the bench's process commits `--rate` writes a second for `--seconds` seconds in
plain SQL (inserts, and a share `--updates` of updates that move a row to another category: by
default half), first with no stream open, then with `--streams` streams open, each with a filter
of its own (`filter[category]=i`, or a range of categories; none with `--unfiltered`, to compare).
After a warm-up it prints the server's CPU (share of one core; SQLite's threads included) in both
runs, the bench's own, and the delay from each commit to each event it caused on a stream (p50,
p99), with how many events arrived.

Each stream's page is checked with one statement bounded by the page's keys (`key IN (…)`), never a
scan of the table: the CPU should not grow with `--rows`. The clients run in the bench's process on
the same machine; on a small machine they compete with the server for the cores.

An update of a row a stream's filter does not select is a `delete` on that stream (the feed cannot
tell whether the client holds the row), so with updates every stream receives about one event per
update: the figures grow with streams × updates. A new row that a filter does not select is no
event on that stream.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable
from starlette.applications import Starlette
from starlette.routing import Mount

from bench.private import private_database
from pb_headless import ApiRegistry, HeadlessAPI, TokenStore, install
from pb_headless.database.dialect import dialect_of

STREAMS_PER_TOKEN = 5  # docs/changes.md: at most 5 open streams per token on one instance
CATEGORIES = 100
UNFILTERED = "--unfiltered" in sys.argv  # the same streams without filters, to compare
WARM_UP = 5.0  # seconds of writes with the streams open before the measured ones
FIRST_NEW_ID = 10_000_000  # inserted rows take ids from here, so the writer knows them before commit
metadata = sa.MetaData()
items = sa.Table(
    "bench_filtered",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("category", sa.Integer, nullable=False, index=True),
    sa.Column("published", sa.Boolean, nullable=False),
)


def registry() -> ApiRegistry:
    built = ApiRegistry()
    built.register(
        "items",
        {
            "model": items,
            "fields": ["title", "category"],
            "filterable": ["category", "title"],
            "searchable": ["title"],
            "operations": ["list", "show"],
        },
    )
    return built


def make_app() -> Starlette:
    """The server's app (`uvicorn --factory bench.filtered_streams:make_app`), on PB_BENCH_DATABASE."""
    database = Database(os.environ["PB_BENCH_DATABASE"])
    api = HeadlessAPI(database, registry(), rate_limit=1_000_000, webhooks=False, max_streams=1000)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await database.connect()
        await api.startup()
        yield
        await api.shutdown()
        await database.disconnect()

    return Starlette(routes=[Mount("/api/pb/v1", app=api)], lifespan=lifespan)


def stream_filter(number: int) -> dict[str, str]:
    """A filter of its own for each stream: one category, or a range of ten (none with --unfiltered)."""
    if UNFILTERED:
        return {}
    if number < CATEGORIES // 2:
        return {"filter[category]": str(number)}
    low = number - CATEGORIES // 2
    return {"filter[category][gte]": str(low), "filter[category][lt]": str(low + 10)}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1000 if ordered else float("nan")


class Writer:
    """Commits writes at a steady rate; remembers when each row's latest write committed."""

    def __init__(
        self,
        database: Database,
        rows: int,
        updates: float,
        first_id: int = FIRST_NEW_ID,
        committed: dict[int, float] | None = None,
    ) -> None:
        self.database, self.rows, self.updates = database, rows, updates
        self.committed: dict[int, float] = {} if committed is None else committed
        self.count = 0
        self.next_id = first_id

    async def run(self, rate: int, seconds: float) -> None:
        started = time.perf_counter()
        total = int(rate * seconds)
        for number in range(total):
            due = started + number / rate
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            category = random.randrange(CATEGORIES)
            statement: sa.Insert | sa.Update
            inserts = int((number + 1) * self.updates) == int(number * self.updates)  # a share are updates
            if inserts:
                key, self.next_id = self.next_id, self.next_id + 1
                statement = items.insert().values(
                    id=key, title=f"w{number}", category=category, published=True
                )
            else:
                key = random.randrange(1, self.rows + 1)
                statement = (
                    items.update().where(items.c.id == key).values(category=category, title=f"w{number}")
                )
            await self.database.execute(statement)
            self.committed[key] = time.perf_counter()
            self.count += 1


async def follow(
    client: httpx.AsyncClient,
    token: str,
    params: dict[str, str],
    committed: dict[int, float],
    delays: list[float],
    ready: Callable[[], None],
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with client.stream(
        "GET", "/api/pb/v1/changes/items/stream", params=params, headers=headers
    ) as answer:
        if answer.status_code != 200:
            raise RuntimeError(f"stream refused: {answer.status_code} {await answer.aread()!r}")
        lines = answer.aiter_lines()
        while "stream open" not in await anext(lines):
            pass
        ready()
        async for line in lines:
            if line.startswith("data: "):
                arrived = time.perf_counter()
                key = json.loads(line[6:])["id"]
                if key in committed:
                    delays.append(arrived - committed[key])


async def measure(kind: str, streams: int, rate: int, seconds: float, rows: int, updates: float) -> None:
    async with private_database(kind) as url:
        await run(kind, url, streams, rate, seconds, rows, updates)


async def prepare(database: Database, rows: int, tokens: int) -> list[str]:
    await install(database)
    await database.execute(str(CreateTable(items).compile(dialect=dialect_of(database))))
    for start in range(1, rows + 1, 1000):
        batch = [
            {"id": key, "title": f"row {key}", "category": key % CATEGORIES, "published": True}
            for key in range(start, min(rows, start + 999) + 1)
        ]
        async with database.transaction():  # one commit per thousand rows, not one per row
            await database.execute_many(items.insert(), batch)
    store = TokenStore(database)
    return [(await store.create(f"bench-{number}", "items.read"))[1] for number in range(tokens)]


async def run(
    kind: str, url: str, streams: int, rate: int, seconds: float, rows: int, updates: float
) -> None:
    database = Database(url)
    await database.connect()
    try:
        tokens = await prepare(database, rows, max(1, -(-streams // STREAMS_PER_TOKEN)))
        with serving(url) as (base, pid):
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                # The first request installs the triggers; then the control run, no stream open.
                await client.get("/api/pb/v1/changes/items", headers={"Authorization": f"Bearer {tokens[0]}"})
                control_writer = Writer(database, rows, updates)
                before = cpu_seconds(pid)
                await control_writer.run(rate, seconds / 2)
                control_cpu = (cpu_seconds(pid) - before) / (seconds / 2)
                committed: dict[int, float] = {}
                delays: list[float] = []
                opened = asyncio.Event()
                ready = 0

                def one_ready() -> None:
                    nonlocal ready
                    ready += 1
                    if ready == streams:
                        opened.set()

                followers = [
                    asyncio.create_task(
                        follow(
                            client,
                            tokens[n // STREAMS_PER_TOKEN],
                            stream_filter(n),
                            committed,
                            delays,
                            one_ready,
                        )
                    )
                    for n in range(streams)
                ]
                await asyncio.wait_for(opened.wait(), 60)
                # A warm-up: streams that opened before the instance's memory of recent entries
                # reached back to them read their first page in the backlog lane, one at a time.
                warm = Writer(database, rows, updates, control_writer.next_id, committed)
                await warm.run(rate, WARM_UP)
                await asyncio.sleep(2.0)
                committed.clear()
                delays.clear()
                writer = Writer(database, rows, updates, warm.next_id, committed)
                before, own = cpu_seconds(pid), time.process_time()
                await writer.run(rate, seconds)
                await asyncio.sleep(1.0)  # the last events on their way
                streams_cpu = (cpu_seconds(pid) - before) / (seconds + 1.0)
                clients_cpu = (time.process_time() - own) / (seconds + 1.0)
                for task in followers:
                    task.cancel()
                await asyncio.gather(*followers, return_exceptions=True)
    finally:
        await database.disconnect()
    kinds = "unfiltered" if UNFILTERED else "filtered"
    print(
        f"{kinds} streams on {kind}: {streams} streams, {rate} writes/s ({updates:.0%} updates) for "
        f"{seconds:g} s, {rows} rows\n"
        f"  server CPU, share of one core: {control_cpu:.0%} without streams, {streams_cpu:.0%} with them"
        f" (the bench's own process, clients and writer: {clients_cpu:.0%})\n"
        f"  commit to event: p50 {statistics.median(delays) * 1000 if delays else float('nan'):.0f} ms, "
        f"p99 {percentile(delays, 0.99):.0f} ms over {len(delays)} events "
        f"({writer.count} writes)"
    )


@contextlib.contextmanager
def serving(url: str) -> Iterator[tuple[str, int]]:
    """uvicorn in a process of its own on a free port: (base address, pid)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "bench.filtered_streams:make_app",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, env={**os.environ, "PB_BENCH_DATABASE": url})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/pb/v1/health", timeout=1).status_code < 500:
                    break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(20)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="sqlite", choices=("sqlite", "postgresql", "mariadb"))
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--unfiltered", action="store_true", help="the same streams without filters")
    parser.add_argument("--updates", type=float, default=0.5, help="the share of writes that are updates")
    arguments = parser.parse_args()
    asyncio.run(
        measure(
            arguments.database,
            arguments.streams,
            arguments.rate,
            arguments.seconds,
            arguments.rows,
            arguments.updates,
        )
    )
