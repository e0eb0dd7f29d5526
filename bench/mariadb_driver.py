"""MariaDB's two drivers side by side: CPU µs per list page with aiomysql and with asyncmy.

    .venv/bin/python bench/mariadb_driver.py [--rows 2000] [--requests 2000] [--per-page 50]
    .venv/bin/python bench/mariadb_driver.py --url mysql://root@127.0.0.1:3306

It makes a database of its own on the server (dropped at the end) holding `--rows` articles (a
constructor table: title, body, category, price, published_at), serves it through a host built with
the public API (`HeadlessAPI` mounted in Starlette, an in-process ASGI client), once per driver in
the same process, and sends `--requests` list pages of `--per-page` rows (with the total, and with
`count=none`) to each in turns of 200, so load from other processes falls on both alike. It prints
the process CPU µs per page (the client's share is the same for both) and the rate. A driver that is
not installed is left out with a line that says so.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path

import httpx
import sqlalchemy as sa
from databases import Database
from sqlalchemy.ext.asyncio import create_async_engine
from starlette.applications import Starlette
from starlette.routing import Mount

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.dataset import ARTICLES, ARTICLES_TAB
from pb_headless import ApiRegistry, HeadlessAPI, TokenStore, install
from pb_headless.constructor import ApiTabStore, ConstructorSource, create_table

DRIVERS = ("aiomysql", "asyncmy")
TURN = 200  # pages per driver before the other driver's turn


async def admin(server: str, sql: str) -> None:
    engine = create_async_engine(
        server.replace("mysql://", "mysql+aiomysql://", 1), isolation_level="AUTOCOMMIT"
    )
    try:
        async with engine.connect() as connection:
            await connection.execute(sa.text(sql))
    finally:
        await engine.dispose()


async def fill(url: str, rows: int) -> None:
    database = Database(url)
    await database.connect()
    try:
        await install(database)
        table = await create_table(database, ARTICLES)
        await ApiTabStore(database).save("articles", ARTICLES_TAB)
        values = [
            {
                "title": f"Article {n} lorem",
                "body": "ipsum dolor sit amet " * 8,
                "category": f"c{n % 10}",
                "price": n % 1000 + 0.5,
                "published_at": None,
                "published": True,
            }
            for n in range(rows)
        ]
        for start in range(0, rows, 1000):
            await database.execute_many(table.insert(), values[start : start + 1000])
    finally:
        await database.disconnect()


class Served:
    def __init__(self, url: str) -> None:
        self.database = Database(url)

    async def start(self) -> None:
        await self.database.connect()
        registry = ApiRegistry()
        registry.add_source(ConstructorSource(lambda _: [ARTICLES]))
        self.api = HeadlessAPI(self.database, registry, rate_limit=10**9, webhooks=False)
        app = Starlette(routes=[Mount("/api/pb/v1", app=self.api)])
        _, token = await TokenStore(self.database).create(f"driver-{uuid.uuid4().hex[:6]}", ("*",))
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://bench.test", timeout=60
        )
        self.headers = {"Authorization": f"Bearer {token}"}

    async def stop(self) -> None:
        await self.client.aclose()
        await self.database.disconnect()


async def measure(served: dict[str, Served], requests: int, query: str) -> dict[str, tuple[float, float]]:
    spent = {name: [0.0, 0.0, 0] for name in served}
    for one in served.values():  # warm up: plans, statements and connections made
        for _ in range(50):
            response = await one.client.get(f"/api/pb/v1/objects/articles?{query}", headers=one.headers)
            assert response.status_code == 200, response.text
    while min(count for _, _, count in spent.values()) < requests:
        for name, one in served.items():
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(TURN):
                response = await one.client.get(f"/api/pb/v1/objects/articles?{query}", headers=one.headers)
                if response.status_code != 200:
                    raise SystemExit(f"{name}: {response.status_code} {response.text[:300]}")
            spent[name][0] += time.process_time() - cpu
            spent[name][1] += time.perf_counter() - wall
            spent[name][2] += TURN
    return {name: (1e6 * cpu / count, count / wall) for name, (cpu, wall, count) in spent.items()}


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("PB_BENCH_MARIADB", "mysql://root@127.0.0.1:3306"))
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--per-page", type=int, default=50)
    args = parser.parse_args()
    server = args.url.rstrip("/")
    name = f"pbdrv_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    await admin(server, f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    served: dict[str, Served] = {}
    try:
        rest = server.split("://", 1)[1]
        await fill(f"mysql+aiomysql://{rest}/{name}", args.rows)
        for driver in DRIVERS:
            try:
                __import__(driver)
            except ImportError:
                print(f"{driver}: not installed, left out")
                continue
            one = Served(f"mysql+{driver}://{rest}/{name}")
            await one.start()
            served[driver] = one
        print(f"MariaDB, {args.rows:,} rows, {args.requests:,} pages of {args.per_page} rows per driver")
        print("CPU µs per page is the process's (client included, the same for both); read it before req/s")
        for label, query in (
            ("list with total", f"per_page={args.per_page}"),
            ("list, count=none", f"per_page={args.per_page}&count=none"),
            ("filter + sort", f"per_page={args.per_page}&filter[category]=c3&sort=-published_at"),
        ):
            figures = await measure(served, args.requests, query)
            line = "  ".join(
                f"{driver} {cpu:6.0f} µs {rate:5.0f} req/s" for driver, (cpu, rate) in figures.items()
            )
            print(f"{label:<18} {line}")
    finally:
        for one in served.values():
            await one.stop()
        await admin(server, f"DROP DATABASE IF EXISTS {name}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
