"""CPU per request of the protocol's requests, in one process, without wrk: a list and its 304
revalidation, a cursor page near the start and at 90 % of the table, a list with `count=none`.

    .venv/bin/python -m bench.protocol --database sqlite --rows 100000
    .venv/bin/python -m bench.protocol --database postgresql --rows 1000000 --reuse

The rows are bench/dataset.py's (the kit's generator, seed 42), in the benchmark's host
(bench/host.py). Each request is sent to the ASGI application directly, one at a time: the figure
is the process's CPU time (`time.process_time`) per request, the library's work and the driver's,
without a server or a client around it; the database server's own CPU is not in it. The requests
take turns in rounds of 50, so a busy machine weighs on all of them alike. The median wall time
per request is printed beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any, cast

from starlette.applications import Starlette

from bench import dataset
from bench.host import create_app

WORK = Path("/tmp/pb-bench")
LIST = "/api/pb/v1/objects/articles"
ROUND = 50  # requests of one kind in a row


async def call(app: Any, path: str, query: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """One GET straight into the ASGI application: its status, headers and body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    answer: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["headers"], answer["body"]


async def warm(app: Any, query: str, headers: dict[str, str], expected: int) -> None:
    """Compiled statements, kept counts and noted positions in place; and the answer is the one meant."""
    for _ in range(20):
        status, _, body = await call(app, LIST, query, headers)
        if status != expected:
            raise SystemExit(f"bench.protocol: {query}: HTTP {status}, not {expected}: {body[:300]!r}")


async def measure(
    app: Any, requests: list[tuple[str, str, dict[str, str], int]], times: int, fresh: bool = False
) -> dict[str, Any]:
    """CPU and wall time per request of each request, taken in rounds of 50 of each in turn, so that
    the load of a shared machine weighs on every request alike. `fresh`: each request of a 200 adds a
    parameter the API ignores, with a counter, so no list is a kept answer (docs/caching.md)."""
    cpu = dict.fromkeys((label for label, *_ in requests), 0.0)
    walls: dict[str, list[float]] = {label: [] for label, *_ in requests}
    sent = 0
    for _ in range(max(times // ROUND, 1)):
        for label, query, headers, status in requests:
            started_cpu = time.process_time()
            for _ in range(ROUND):
                sent += 1
                asked = f"{query}&pb_bench_fresh={sent}" if fresh and status == 200 else query
                started = time.perf_counter()
                await call(app, LIST, asked, headers)
                walls[label].append(time.perf_counter() - started)
            cpu[label] += time.process_time() - started_cpu
    return {
        label: (cpu[label] / len(walls[label]) * 1e6, statistics.median(walls[label]) * 1e6) for label in cpu
    }


async def report(
    app: Any, requests: list[tuple[str, str, dict[str, str], int]], times: int, what: str, fresh: bool = False
) -> None:
    """Each request warmed and checked, then measured by turns (`fresh`: see `measure`); the table printed."""
    for _, query, headers, status in requests:
        await warm(app, query, headers, status)
    figures = await measure(app, requests, times, fresh)
    asked = "each list asked anew (each reads its page)" if fresh else "the same lists again (kept answers)"
    print(f"{what}, {times} requests each, one at a time, in rounds of {ROUND}; {asked}")
    print("| request | CPU µs/request | wall p50 µs |\n|---|---:|---:|")
    for label, (cpu, wall) in figures.items():
        print(f"| {label} | {cpu:.0f} | {wall:.0f} |")


async def run(kind: str, rows: int, times: int, reuse: bool) -> None:
    work = WORK / f"protocol-{kind}-{rows}"
    work.mkdir(parents=True, exist_ok=True)
    saved = work / "pb.json"
    if reuse and saved.is_file():
        url, token = json.loads(saved.read_text())
    else:
        started = time.monotonic()
        url, token = await dataset.build_pb(kind, rows, work, role="protocol")
        saved.write_text(json.dumps([url, token]))
        print(f"[bench] {rows:,} rows on {kind} in {time.monotonic() - started:.0f} s")
    app = create_app(url)
    site = cast(Starlette, app.app)  # CORSMiddleware → the site, whose lifespan starts the API
    async with site.router.lifespan_context(site):
        auth = {"Authorization": f"Bearer {token}", "Host": "127.0.0.1:8000"}
        _, headers, _ = await call(app, LIST, "limit=20", auth)
        tag = headers["etag"]
        _, _, body = await call(app, LIST, "limit=20", auth)
        near = json.loads(body)["meta"]["next_cursor"]
        deep_at = rows * 9 // 10
        _, _, body = await call(app, LIST, f"limit=1&offset={deep_at - 1}", auth)
        deep = json.loads(body)["meta"]["next_cursor"]
        requests = [
            ("list limit=20 (200)", "limit=20", auth, 200),
            ("list revalidated: If-None-Match → 304", "limit=20", {**auth, "If-None-Match": tag}, 304),
            ("list count=none", "limit=20&count=none", auth, 200),
            ("cursor page after row 20", f"limit=20&after={near}", auth, 200),
            (f"cursor page after row {deep_at:,}", f"limit=20&after={deep}", auth, 200),
        ]
        await report(app, requests, times, f"{kind}, {rows:,} rows")


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.protocol", description=__doc__)
    parser.add_argument("--database", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--times", type=int, default=2000)
    parser.add_argument("--reuse", action="store_true", help="reuse the rows of an earlier run")
    args = parser.parse_args()
    asyncio.run(run(args.database, args.rows, args.times, args.reuse))


if __name__ == "__main__":
    main()
