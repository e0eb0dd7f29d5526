"""The fixed cost of a single write, in process: CPU µs per create, update and delete on SQLite.

    .venv/bin/python -m bench.write_cost [--requests 300] [--rounds 3] [--synchronous NORMAL]
    .venv/bin/python -m bench.write_cost --profile create     # cProfile (the loop's thread) instead

bench/batch.py's notes table in a new SQLite file in WAL mode, the API called through
`httpx.ASGITransport` one request at a time (no server, no network), webhooks off. Each round makes
`--requests` creates, then updates each of those rows, then deletes them; the figures are the best
round's CPU µs per request (the process's: aiosqlite's thread too) and wall µs. CPU is the steadier
figure on a busy machine; rps is given for comparison only. `--synchronous NORMAL` runs every
connection with `PRAGMA synchronous = NORMAL` (docs/performance.md, "Against PocketBase's batch, over HTTP").
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sqlite3
import tempfile
import time
from pathlib import Path

import httpx
from databases import Database

from bench.batch_notes import DECLARATION, prepared
from pb_headless import ApiRegistry, HeadlessAPI

WRITES = dict(DECLARATION, operations=["list", "show", "create", "update", "delete"])


async def run(args: argparse.Namespace) -> None:
    path = Path(tempfile.mkdtemp(prefix="pb-write-cost-")) / "notes.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.close()
    plain = await prepared(f"sqlite:///{path}")
    database = Database(f"sqlite:///{path}")
    await database.connect()
    if args.synchronous:
        await database.execute(f"PRAGMA synchronous = {args.synchronous}")
    registry = ApiRegistry()
    registry.register("notes", WRITES)
    api = HeadlessAPI(database, registry, rate_limit=1_000_000_000, webhooks=False)
    await api.startup()
    transport = httpx.ASGITransport(app=api, client=("127.0.0.1", 50000))
    headers = {"Authorization": f"Bearer {plain}"}
    best: dict[str, tuple[float, float]] = {}
    ids: list[int] = []  # this round's rows
    profiler = cProfile.Profile(time.thread_time)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench/", headers=headers) as client:
        for round_number in range(args.rounds + 1):  # the first round warms up
            ids.clear()

            async def create(number: int) -> None:
                answer = await client.post("/objects/notes", json={"title": f"n {number}", "body": "x" * 200})
                assert answer.status_code == 201, answer.text
                ids.append(answer.json()["data"]["id"])

            async def update(number: int) -> None:
                answer = await client.patch(f"/objects/notes/{ids[number]}", json={"title": f"u {number}"})
                assert answer.status_code == 200, answer.text

            async def delete(number: int) -> None:
                answer = await client.delete(f"/objects/notes/{ids[number]}")
                assert answer.status_code == 204, answer.text

            for kind, step in (("create", create), ("update", update), ("delete", delete)):
                profiling = round_number == args.rounds and args.profile == kind
                cpu, wall = time.process_time(), time.perf_counter()
                if profiling:
                    profiler.enable()
                for number in range(args.requests):
                    await step(number)
                if profiling:
                    profiler.disable()
                cpu_us = (time.process_time() - cpu) / args.requests * 1e6
                wall_us = (time.perf_counter() - wall) / args.requests * 1e6
                if round_number and not args.profile:
                    old = best.get(kind, (float("inf"), float("inf")))
                    best[kind] = (min(old[0], cpu_us), min(old[1], wall_us))
    await api.shutdown()
    await database.disconnect()
    if args.profile:
        profiler.dump_stats("/tmp/write_cost.prof")
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(40)
        return
    print(
        f"SQLite, WAL, synchronous={args.synchronous or 'FULL (default)'}, "
        f"{args.requests} x {args.rounds} rounds (best)"
    )
    print(f"{'request':<8} {'CPU µs':>8} {'wall µs':>8} {'rps':>6}")
    for kind, (cpu_us, wall_us) in best.items():
        print(f"{kind:<8} {cpu_us:>8.0f} {wall_us:>8.0f} {1e6 / wall_us:>6.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.write_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--synchronous", default="", help="NORMAL: PRAGMA synchronous on the connection")
    parser.add_argument("--profile", default="", help="create, update or delete: print its cProfile")
    parser.add_argument("--sort", default="cumulative", help="cProfile sort key (tottime, cumulative)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
