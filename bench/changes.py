"""What the change log costs and how fast changes reach apps (docs/changes.md, docs/performance.md).

    bash bench/run --only changes [--database sqlite|postgresql|mariadb]   # this section alone
    .venv/bin/python -m bench.changes [--database ...] [--writes 300] [--hooks 60]

`bash bench/run` runs it after pb_headless's table (`--no-changes` leaves it out) and prints its table:

1. p50/p99 of `POST /objects/items` through the API (in process) without the change log
   (`change_log=False`, no triggers) and with it, the two taking turns after a warm-up;
2. p50/p99 of the delay from a commit (an INSERT by the site's own code) to its event on a stream
   served by uvicorn on loopback;
3. p50/p99 of the delay from a commit to its webhook's arrival at a receiver on loopback
   (bench/webhook_delay.py), the worker on its default timings.

Run it on a quiet machine for figures worth comparing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
import uuid
from dataclasses import dataclass

import httpx
import sqlalchemy as sa
import uvicorn
from databases import Database
from sqlalchemy.schema import CreateTable
from starlette.applications import Starlette
from starlette.routing import Mount

from bench import webhook_delay
from bench.private import private_database
from pb_headless import ApiRegistry, HeadlessAPI, TokenStore, install
from pb_headless.database.dialect import dialect_of

metadata = sa.MetaData()
items = sa.Table(
    "bench_items",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
)
# The same table without a change log: the creates without it go here, taking turns with those to
# `items`, so both see the same machine (a run on a busy machine drifts; turns cancel the drift).
plain_items = sa.Table(
    "bench_plain_items",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
)
WARM_UP = 20  # creates of each kind not counted: the first statements of a connection are slower


@dataclass(frozen=True)
class Figures:
    """Milliseconds: (p50, p99) of each measure, and how many samples each has."""

    database: str
    create_without: tuple[float, float]
    create_with: tuple[float, float]
    to_stream: tuple[float, float]
    to_webhook: tuple[float, float]
    writes: int
    hooks: int


def p50_p99(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


def build(database: Database, change_log: bool) -> tuple[HeadlessAPI, Starlette]:
    """An API publishing `items`; with the change log its triggers go on `bench_items`, without it
    the object is on `bench_plain_items`, which never gets them."""
    registry = ApiRegistry()
    registry.register(
        "items",
        {
            "model": items if change_log else plain_items,
            "fields": ["title"],
            "writable": ["title"],
            "operations": ["list", "show", "create"],
        },
    )
    api = HeadlessAPI(database, registry, change_log=change_log, rate_limit=1_000_000, webhooks=False)
    return api, Starlette(routes=[Mount("/api/pb/v1", app=api)])


async def creates(
    database: Database, headers: dict[str, str], writes: int
) -> tuple[list[float], list[float]]:
    """Seconds per create through the API without the change log and with it, taking turns."""
    samples: dict[bool, list[float]] = {False: [], True: []}
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for change_log in (False, True):
            _, app = build(database, change_log)
            transport = httpx.ASGITransport(app=app)
            client = httpx.AsyncClient(transport=transport, base_url="http://bench")
            clients[change_log] = await stack.enter_async_context(client)
            await client.get("/api/pb/v1/changes/items", headers=headers)  # installs (or not) the triggers
        for number in range(WARM_UP + writes):
            for change_log in (number % 2 == 0, number % 2 == 1):
                started = time.perf_counter()
                body = {"title": f"n{number}"}
                answer = await clients[change_log].post(
                    "/api/pb/v1/objects/items", json=body, headers=headers
                )
                elapsed = time.perf_counter() - started
                assert answer.status_code == 201, answer.text
                if number >= WARM_UP:
                    samples[change_log].append(elapsed)
    return samples[False], samples[True]


async def stream_delays(
    database: Database, app: Starlette, headers: dict[str, str], writes: int
) -> list[float]:
    config = uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    committed: dict[str, float] = {}
    delays: list[float] = []

    async def write() -> None:
        for number in range(writes):
            title = f"s{number}"
            await database.execute(items.insert().values(title=title))
            committed[title] = time.perf_counter()
            await asyncio.sleep(0.01)

    async with (
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
        client.stream("GET", "/api/pb/v1/changes/items/stream", headers=headers) as response,
    ):
        lines = response.aiter_lines()
        while "stream open" not in await anext(lines):
            pass
        writer = asyncio.create_task(write())
        while len(delays) < writes:
            line = await anext(lines)
            if line.startswith("data: "):
                arrived = time.perf_counter()
                title = json.loads(line[6:])["record"]["title"]
                delays.append(arrived - committed.get(title, arrived))
        await writer
    server.should_exit = True
    await task
    return delays


def changes_table(figures: Figures) -> str:
    """The change log section of a run's report: what it adds to a write, and how fast changes reach
    a stream and a webhook receiver."""
    added = figures.create_with[0] - figures.create_without[0]
    lines = [
        f"Changes on {figures.database}: {figures.writes} creates through the API (in process) without and "
        f"with the change log, {figures.writes} commits to a stream on loopback, {figures.hooks} commits "
        "to a webhook receiver on loopback (the worker on its default timings)",
        "",
        "| measure | p50 ms | p99 ms |",
        "|---|---:|---:|",
        f"| create, change log off | {figures.create_without[0]:.2f} | {figures.create_without[1]:.2f} |",
        f"| create, change log on | {figures.create_with[0]:.2f} | {figures.create_with[1]:.2f} |",
        f"| commit → stream event | {figures.to_stream[0]:.1f} | {figures.to_stream[1]:.1f} |",
        f"| commit → webhook arrives | {figures.to_webhook[0]:.0f} | {figures.to_webhook[1]:.0f} |",
        "",
        f"- the change log adds {added:+.2f} ms to a create's p50 ({added / figures.create_without[0]:+.0%})",
    ]
    return "\n".join(lines) + "\n"


async def measure(kind: str, writes: int = 300, hooks: int = 60) -> Figures:
    """The three measures on `kind`. On PostgreSQL and MariaDB the API's part works in a database of
    its own, dropped at the end; the webhook part in the tests' private database (tests/support)."""
    async with private_database(kind) as url:
        without, with_log, stream = await run(kind, Database(url), writes)
    hooked = await webhook_delay.measure(kind, hooks)
    return Figures(
        kind, p50_p99(without), p50_p99(with_log), p50_p99(stream), p50_p99(hooked), writes, len(hooked)
    )


async def run(kind: str, database: Database, writes: int) -> tuple[list[float], list[float], list[float]]:
    """Seconds: creates without the change log, with it, and commit → stream event."""
    await database.connect()
    try:
        await install(database)
        for table in (items, plain_items):
            await database.execute(str(CreateTable(table).compile(dialect=dialect_of(database))))
        _, plain = await TokenStore(database).create(f"bench-{uuid.uuid4().hex[:6]}", "*")
        headers = {"Authorization": f"Bearer {plain}"}
        without, with_log = await creates(database, headers, writes)
        _, app = build(database, True)
        return without, with_log, await stream_delays(database, app, headers, writes)
    finally:
        await database.disconnect()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="sqlite", choices=("sqlite", "postgresql", "mariadb"))
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--hooks", type=int, default=60)
    arguments = parser.parse_args()
    print(changes_table(asyncio.run(measure(arguments.database, arguments.writes, arguments.hooks))))
