"""The cost of the worst search the API accepts, on each database (docs/hardening.md, "Searches").

Builds the bench's `articles` table (`bash bench/run`'s rows, title, body and category searchable) at
`--rows` rows on each database asked for, in a database of its own (`pb_bench_searchcost_<rows>`), then
sends searches chosen to cost the most: a word in every row, a common one, words each common but
rarely together, words found nowhere (every row tested), in-process (no HTTP server, no load). For
each it prints the status, the answer time (p50 and worst of `--times`), this process's CPU time per
request (SQLite's work is in it; a server's is not), `meta.total` and whether it was estimated; then
the worst search answered 200. A search past its budget answers 422, never 503.

    .venv/bin/python -m bench.search_cost --rows 100000 --databases sqlite,postgresql,mariadb
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

import httpx
from databases import Database
from starlette.applications import Starlette
from starlette.routing import Mount

from bench.dataset import build_pb
from bench.host import RATE_LIMIT, load_tables
from pb_headless import ApiRegistry, HeadlessAPI
from pb_headless.constructor import ConstructorSource

HEADINGS = ("p50 ms", "max ms", "cpu ms", "total")
SEARCHES = (
    "e",  # in every row: the count reaches its cap
    "lorem",  # about 2 % of the rows
    "qui dolorem",
    "ipsum dolor sit amet",  # each common; together rarer
    "лиса наука город люди",  # found nowhere: every row is tested
    "zzyzx",
)


async def measure(kind: str, rows: int, work: Path, times: int) -> None:
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    url, token = await build_pb(kind, rows, work, role="searchcost")
    print(f"\n{kind}, {rows:,} rows (built in {time.perf_counter() - started:.0f} s)")
    database = Database(url)
    registry = ApiRegistry()
    registry.add_source(ConstructorSource(load_tables))
    api = HeadlessAPI(database, registry, rate_limit=RATE_LIMIT)
    headers = {"Authorization": f"Bearer {token}"}
    await database.connect()
    await api.startup()
    worst: tuple[float, str] = (0.0, "")
    try:
        transport = httpx.ASGITransport(app=Starlette(routes=[Mount("/api/pb/v1", app=api)]))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=60) as client:
            print(f"{'search':26s} {'status':>6s}", *(f"{h:>8s}" for h in HEADINGS), "est.")
            for words in SEARCHES:
                line, took = await _one(client, headers, words, times)
                print(line)
                if line.split()[-6] == "200" and took > worst[0]:
                    worst = (took, words)
    finally:
        await api.shutdown()
        await database.disconnect()
    print(f"worst accepted search on {kind}: {worst[1]!r}, {worst[0]:.0f} ms")


async def _one(
    client: httpx.AsyncClient, headers: dict[str, str], words: str, times: int
) -> tuple[str, float]:
    query = f"/api/pb/v1/objects/articles?search={words}&limit=20"
    await client.get(query, headers=headers)  # warm-up: plans, compiled statements
    took, cpu, statuses = [], [], set()
    answer = None
    for _ in range(times):
        wall, process = time.perf_counter(), time.process_time()
        answer = await client.get(query, headers=headers)
        took.append((time.perf_counter() - wall) * 1000)
        cpu.append((time.process_time() - process) * 1000)
        statuses.add(answer.status_code)
    assert answer is not None
    meta = answer.json().get("meta", {}) if answer.status_code == 200 else {}
    status = "/".join(str(code) for code in sorted(statuses))
    estimated = "yes" if meta.get("total_estimated") else "-"
    line = (
        f"{words:26s} {status:>6s} {statistics.median(took):8.1f} {max(took):8.1f} "
        f"{statistics.median(cpu):8.1f} {meta.get('total', '-')!s:>8s} {estimated}"
    )
    return line, max(took)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--databases", default="sqlite,postgresql,mariadb")
    parser.add_argument("--times", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/pb-bench-search-cost"))
    args = parser.parse_args()
    for kind in args.databases.split(","):
        asyncio.run(measure(kind, args.rows, args.work / kind, args.times))


if __name__ == "__main__":
    main()
