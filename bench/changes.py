"""What the change log costs and how fast it is (docs/changes.md): a short, self-contained run.

    .venv/bin/python -m bench.changes [--database sqlite|postgresql|mariadb] [--writes 300]

1. p50/p99 of `POST /objects/items` through the API (in process) without the change log
   (`change_log=False`, no triggers) and with it;
2. p50/p99 of the delay from a commit (an INSERT by the site's own code) to its event on a stream
   served by uvicorn on loopback.

Run it on a quiet machine for figures worth comparing; it prints one line per figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import sqlalchemy as sa
import uvicorn
from databases import Database
from sqlalchemy.schema import CreateTable
from starlette.applications import Starlette
from starlette.routing import Mount

from pb_headless import ApiRegistry, HeadlessAPI, TokenStore, install
from pb_headless.database.dialect import dialect_of

SERVERS = {
    "postgresql": "postgresql://postgres@127.0.0.1:5432/test",
    "mariadb": "mysql://root@127.0.0.1:3306/test",
}
metadata = sa.MetaData()
items = sa.Table(
    "bench_items",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
)


def quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"p50 {statistics.median(ordered) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms (n={len(ordered)})"


def build(database: Database, change_log: bool) -> tuple[HeadlessAPI, Starlette]:
    registry = ApiRegistry()
    registry.register(
        "items",
        {
            "model": items,
            "fields": ["title"],
            "writable": ["title"],
            "operations": ["list", "show", "create"],
        },
    )
    api = HeadlessAPI(database, registry, change_log=change_log, rate_limit=1_000_000)
    return api, Starlette(routes=[Mount("/api/pb/v1", app=api)])


async def creates(app: Starlette, headers: dict[str, str], writes: int) -> list[float]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        await client.get("/api/pb/v1/changes/items", headers=headers)  # installs (or not) the triggers
        samples = []
        for number in range(writes):
            started = time.perf_counter()
            body = {"title": f"n{number}"}
            answer = await client.post("/api/pb/v1/objects/items", json=body, headers=headers)
            samples.append(time.perf_counter() - started)
            assert answer.status_code == 201, answer.text
        return samples


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


async def main(kind: str, writes: int) -> None:
    """On PostgreSQL and MariaDB the run works in a database of its own, dropped at the end."""
    private = f"pbbench_{uuid.uuid4().hex[:8]}"
    if kind == "sqlite":
        url = f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    else:
        async with Database(SERVERS[kind]) as server:
            await server.execute(f"CREATE DATABASE {private}")
        url = SERVERS[kind].rsplit("/", 1)[0] + "/" + private
    try:
        await run(kind, Database(url), writes)
    finally:
        if kind != "sqlite":
            async with Database(SERVERS[kind]) as server:
                await server.execute(f"DROP DATABASE {private}")


async def run(kind: str, database: Database, writes: int) -> None:
    await database.connect()
    try:
        await install(database)
        await database.execute(str(CreateTable(items).compile(dialect=dialect_of(database))))
        _, plain = await TokenStore(database).create(f"bench-{uuid.uuid4().hex[:6]}", "*")
        headers = {"Authorization": f"Bearer {plain}"}
        for change_log in (False, True):
            _, app = build(database, change_log)
            figures = quantiles(await creates(app, headers, writes))
            print(f"{kind}: create through the API, change log {'on' if change_log else 'off'}: {figures}")
        _, app = build(database, True)
        figures = quantiles(await stream_delays(database, app, headers, writes))
        print(f"{kind}: commit to stream event: {figures}")
    finally:
        await database.disconnect()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="sqlite", choices=("sqlite", "postgresql", "mariadb"))
    parser.add_argument("--writes", type=int, default=300)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.database, arguments.writes))
