"""Rows per second written by one `POST /batch` of 20 creates against 20 single `POST`s, per database.

    .venv/bin/python -m bench.batch --database sqlite
    .venv/bin/python -m bench.batch --database postgresql --url postgresql://postgres@127.0.0.1:5432/test
    .venv/bin/python -m bench.batch --database mariadb --url mysql://root@127.0.0.1:3306/test
    .venv/bin/python -m bench.batch --pocketbase     # over HTTP against PocketBase (bench/batch_http.py)

A table of its own (`bench_batch_notes`: a title, a text, the published flag; made afresh, dropped
after) is published with create; the API runs in this process (`httpx.ASGITransport`, no server, no
network), one request at a time, with the change log's triggers on as a site has them. Each round
writes 20 rows as one batch and 20 rows as 20 single creates, in turn, so a busy machine weighs on both
alike; the figures are the medians of the rounds' wall times, as rows per second. A batch on
PostgreSQL and SQLite 3.35+ sends the 20 rows as one INSERT … RETURNING; MariaDB one INSERT a row
(docs/writes.md, "What the database does with a batch").
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from databases import Database
from sqlalchemy.schema import DropTable

from bench.batch_notes import notes, notes_api, prepared
from pb_headless.database.dialect import dialect_of

ROWS = 20
URLS = {
    "postgresql": "postgresql://postgres@127.0.0.1:5432/test",
    "mariadb": "mysql://root@127.0.0.1:3306/test",
}


async def run(url: str, rounds: int) -> dict[str, float]:
    plain = await prepared(url)
    database = Database(url)
    await database.connect()
    try:
        api = notes_api(database)
        await api.startup()
        headers = {"Authorization": f"Bearer {plain}"}
        transport = httpx.ASGITransport(app=api, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench/", headers=headers
        ) as client:
            timings = await _rounds(client, rounds)
        await api.shutdown()
        await database.execute(str(DropTable(notes).compile(dialect=dialect_of(database))))
    finally:
        await database.disconnect()
    return {kind: ROWS / statistics.median(times) for kind, times in timings.items()}


async def _rounds(client: httpx.AsyncClient, rounds: int) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {"batch": [], "single": []}
    for number in range(rounds + 2):  # two rounds to warm up: compiled statements, pool, caches
        batch = {
            "operations": [
                {
                    "op": "create",
                    "object": "notes",
                    "data": {"title": f"batch {number}.{row}", "body": "x" * 200},
                }
                for row in range(ROWS)
            ]
        }
        started = time.perf_counter()
        answer = await client.post("/batch", json=batch)
        batch_time = time.perf_counter() - started
        if answer.status_code != 200:
            raise SystemExit(f"bench.batch: the batch answered {answer.status_code}: {answer.text[:300]}")
        started = time.perf_counter()
        for row in range(ROWS):
            body = {"title": f"single {number}.{row}", "body": "x" * 200}
            single = await client.post("/objects/notes", json=body)
            if single.status_code != 201:
                raise SystemExit(f"bench.batch: a create answered {single.status_code}: {single.text[:300]}")
        single_time = time.perf_counter() - started
        if number >= 2:
            timings["batch"].append(batch_time)
            timings["single"].append(single_time)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument("--url", help="the database (default: a new SQLite file, or the local test servers)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument(
        "--pocketbase",
        action="store_true",
        help="on SQLite over HTTP, against PocketBase's /api/batch and single creates (bench/batch_http.py)",
    )
    options = parser.parse_args()
    if options.pocketbase:
        from bench.batch_http import report

        report(options.rounds)
        return
    with tempfile.TemporaryDirectory() as folder:
        url = options.url or (
            f"sqlite:///{Path(folder) / 'batch.db'}"
            if options.database == "sqlite"
            else URLS[options.database]
        )
        figures = asyncio.run(run(url, options.rounds))
    batch, single = figures["batch"], figures["single"]
    print(f"{options.database}: {ROWS} creates, median of {options.rounds} rounds")
    print(f"  one batch of {ROWS}:   {batch:8.0f} rows/s")
    print(f"  {ROWS} single creates: {single:8.0f} rows/s")
    print(f"  batch / single:     {batch / single:8.1f} x")


if __name__ == "__main__":
    main()
