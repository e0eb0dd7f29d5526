"""Search for words of every frequency, one request at a time, against a database `bash bench/run` built.

`bench/run` measures one common word (`search=lorem`, about 2 % of the rows) under load. How an
index serves search depends on the word: a rare word or one found nowhere is where reading the table
costs most, and where PostgreSQL's generic plan for a prepared `LIKE` would walk the whole key
(docs/performance.md, "The search index on PostgreSQL"). This asks the bench host in-process (no
HTTP server, no load generator), `--times` times per word after one warm-up, and prints p50 and p99
of the answer time, `meta.total` and how many answers were not 200.

    .venv/bin/python -m bench.search_words --work /tmp/pb-bench/postgresql-1000000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

import httpx
from databases import Database
from starlette.applications import Starlette
from starlette.routing import Mount

from bench.host import RATE_LIMIT, load_tables
from pb_headless import ApiRegistry, HeadlessAPI
from pb_headless.constructor import ConstructorSource

WORDS = ("lorem", "ipsum dolor", "zzyzx", "c7", "qui", "LOREM")


async def measure(work: Path, times: int, words: tuple[str, ...]) -> None:
    prepared = json.loads((work / "prepared.json").read_text())
    database = Database(prepared["pb_url"])
    registry = ApiRegistry()
    registry.add_source(ConstructorSource(load_tables))
    api = HeadlessAPI(database, registry, rate_limit=RATE_LIMIT)
    site = Starlette(routes=[Mount("/api/pb/v1", app=api)])
    headers = {"Authorization": f"Bearer {prepared['pb_token']}"}
    await database.connect()
    await api.startup()
    try:
        transport = httpx.ASGITransport(app=site)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            print(f"{'word':14s} {'total':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'non-200':>8s}  (× {times})")
            for word in words:
                query = f"/api/pb/v1/objects/articles?search={word}&limit=20"
                first = await client.get(query, headers=headers)
                total = first.json()["meta"].get("total") if first.status_code == 200 else first.status_code
                took, failed = [], 0
                for _ in range(times):
                    started = time.perf_counter()
                    answer = await client.get(query, headers=headers)
                    took.append((time.perf_counter() - started) * 1000)
                    failed += answer.status_code != 200  # 503: the database time limit passed
                took.sort()
                p99 = took[min(len(took) - 1, round(0.99 * (len(took) - 1)))]
                print(f"{word:14s} {total!s:>8s} {statistics.median(took):8.1f} {p99:8.1f} {failed:8d}")
    finally:
        await api.shutdown()
        await database.disconnect()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, required=True, help="the run's directory (holds prepared.json)")
    parser.add_argument("--times", type=int, default=30)
    parser.add_argument("--words", default=",".join(WORDS))
    args = parser.parse_args()
    asyncio.run(measure(args.work, args.times, tuple(args.words.split(","))))


if __name__ == "__main__":
    main()
