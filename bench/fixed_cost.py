"""The fixed cost of a request on the read path, in process: CPU µs per request, no network, no server.

Drives the benchmark's host (bench/host.py: `CORSMiddleware` around a Starlette site that mounts the
API) with ASGI calls one after another, on uvloop as uvicorn runs it, and prints CPU and wall µs per
request for the host's own page (`host`: a constant, no API), health, show one record, a list page
with its total, one without a count, and the record's 304 (show with the ETag of its answer: `304`);
with `--only update,create`, the writes (a PATCH of the record's price, a POST of a new row: real
transactions on the built database). With `--floor` the kit's floor app is driven the same way, so
the ratio of the two is the application's own share (uvicorn's parsing and writing, about 25 µs a
request, comes on top of both in a real run).

    .venv/bin/python -m bench.fixed_cost [--rows 100000] [--requests 3000] [--floor]
    .venv/bin/python -m bench.fixed_cost --profile show        # cProfile of the show request
    .venv/bin/python -m bench.fixed_cost --only health,show --rounds 5
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/pb-fixed-cost.callgrind.%p \
        .venv/bin/python -m bench.fixed_cost --instructions --requests 200   # instructions per request

CPU time is the process's (every thread: aiosqlite's too), the best of `--rounds` rounds: on a busy
machine the best round is the one least disturbed. The database is built once per row count under
/tmp/pb-fixed-cost-<rows>/ (bench/dataset.py's rows and token), and reused.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import glob
import importlib.util
import json
import os
import pstats
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from bench.dataset import build_pb, build_sqlite_floor, kit_token
from bench.kit import kit_dir

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
RECORD = 12345
CALLGRIND_OUT = "/tmp/pb-fixed-cost.callgrind"  # --callgrind-out-file=/tmp/pb-fixed-cost.callgrind.%p
PB_REQUESTS = {
    # Not the API: the host's own page, a constant answer through the same CORSMiddleware and
    # Starlette stack. What any route of this host costs; the floor's `/ok` is its counterpart.
    "host": ("/", "", False),
    "health": ("/api/pb/v1/health", "", False),
    "show": (f"/api/pb/v1/objects/articles/{RECORD}", "", True),
    "list": ("/api/pb/v1/objects/articles", "limit=20", True),
    "list_none": ("/api/pb/v1/objects/articles", "limit=20&count=none", True),
    "304": (f"/api/pb/v1/objects/articles/{RECORD}", "", True),  # show with its own ETag: 304
}
# Writes, each a real transaction on the built database (`--only update,create`; not in the default
# set, as they change the rows the reads are measured on): an update sets the record's price, a
# create adds a row (bench/writes.py sends the same bodies under wrk).
PB_WRITES = {
    "update": ("PATCH", f"/api/pb/v1/objects/articles/{RECORD}", b'{"price": 1.5}'),
    "create": (
        "POST",
        "/api/pb/v1/objects/articles",
        b'{"title": "fixed cost", "body": "A body of a few words.", "category": "c1", "price": 9.5, '
        b'"published_at": "2026-01-01T00:00:00Z"}',
    ),
}
FLOOR_REQUESTS = {
    "host": ("/ok", "", False),
    "health": ("/ok", "", False),
    "show": (f"/items/articles/{RECORD}", "", True),
    "list": ("/items/articles", "limit=20", True),
    "list_none": ("/items/articles", "limit=20", True),
}


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.fixed_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=3000, help="requests per round and kind")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated: host,health,show,list,list_none,304 (the default), update,create",
    )
    parser.add_argument("--floor", action="store_true", help="also drive the kit's floor app")
    parser.add_argument("--profile", default="", help="one kind: print its cProfile instead")
    parser.add_argument("--sort", default="tottime", help="cProfile sort key (tottime, cumulative)")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="under valgrind --tool=callgrind --instr-atstart=no: count instructions per request "
        "(repeatable on a busy machine) instead of CPU time",
    )
    return parser.parse_args(argv)


async def ensure_database(rows: int) -> dict[str, str]:
    work = Path(f"/tmp/pb-fixed-cost-{rows}")
    stamp = work / "built.json"
    if stamp.is_file():
        return dict(json.loads(stamp.read_text()))
    work.mkdir(parents=True, exist_ok=True)
    url, token = await build_pb("sqlite", rows, work)
    floor_token = kit_token(work)
    floor_db = build_sqlite_floor(rows, work, floor_token)
    built = {"url": url, "token": token, "floor_db": floor_db, "floor_token": floor_token}
    stamp.write_text(json.dumps(built))
    return built


def scope_of(path: str, query: str, token: str | None) -> dict[str, Any]:
    """What uvicorn hands the application for a wrk request."""
    headers = [(b"host", b"127.0.0.1:8057")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 8057),
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
        "method": "GET",
        "root_path": "",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": headers,
        "state": {},
    }


async def sent_messages(app: ASGIApp, template: dict[str, Any]) -> list[dict[str, Any]]:
    """The ASGI messages `app` sends for one request made from `template` (its body: `template["body"]`,
    which is not part of the scope)."""
    sent: list[dict[str, Any]] = []
    body = template.get("body", b"")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {name: value for name, value in template.items() if name != "body"}
    await app(dict(scope, headers=list(template["headers"]), state={}), receive, send)
    return sent


async def call(app: ASGIApp, template: dict[str, Any]) -> tuple[int, bytes]:
    sent = await sent_messages(app, template)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


async def lifespan(app: ASGIApp) -> Callable[[], Awaitable[None]]:
    """Starts the app's lifespan; returns what shuts it down."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    task = asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    started = await outbox.get()
    if started["type"] != "lifespan.startup.complete":
        raise RuntimeError(f"the app did not start: {started}")

    async def stop() -> None:
        await inbox.put({"type": "lifespan.shutdown"})
        await outbox.get()
        await task

    return stop


async def pb_template(app: ASGIApp, kind: str, token: str) -> dict[str, Any]:
    """The request of `kind`; for "304", the show request with the ETag its answer carries."""
    if kind in PB_WRITES:
        method, path, body = PB_WRITES[kind]
        template = scope_of(path, "", token)
        template["method"] = method
        length = str(len(body)).encode()
        template["headers"] += [(b"content-type", b"application/json"), (b"content-length", length)]
        template["body"] = body
        return template
    path, query, authorized = PB_REQUESTS[kind]
    template = scope_of(path, query, token if authorized else None)
    if kind == "304":
        sent = await sent_messages(app, template)
        start = next(m for m in sent if m["type"] == "http.response.start")
        etag = next(value for name, value in start["headers"] if name.lower() == b"etag")
        template["headers"].append((b"if-none-match", etag))
    return template


async def warm(app: ASGIApp, template: dict[str, Any], count: int) -> None:
    status, body = await call(app, template)
    if status not in (200, 201, 304):
        raise RuntimeError(
            f"{template['path']}?{template['query_string'].decode()}: HTTP {status} {body[:200]!r}"
        )
    for _ in range(min(count, 300)):  # warm: compiled statements, kept counts, the token row
        await call(app, template)


async def instructions(app: ASGIApp, template: dict[str, Any], count: int) -> float:
    """Instructions per request, counted by callgrind while `callgrind_control` switches it on; the
    count of switching on and reading alone (no request) is taken off."""
    await warm(app, template, count)
    gc.collect()
    return (await _counted(app, template, count) - await _counted(app, template, 0)) / count


async def _counted(app: ASGIApp, template: dict[str, Any], count: int) -> int:
    pid = str(os.getpid())
    before = set(glob.glob(f"{CALLGRIND_OUT}.{pid}*"))
    subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
    subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
    for _ in range(count):
        await call(app, template)
    subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
    subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
    dumped = sorted(set(glob.glob(f"{CALLGRIND_OUT}.{pid}*")) - before)
    if not dumped:
        raise RuntimeError(f"no callgrind dump at {CALLGRIND_OUT}.{pid}*: run under the command of --help")
    total = 0
    for path in dumped:
        found = re.search(r"^(?:summary|totals): (\d+)", Path(path).read_text(), re.MULTILINE)
        total += int(found.group(1)) if found else 0
        Path(path).unlink()
    return total


async def measure(app: ASGIApp, template: dict[str, Any], count: int, rounds: int) -> tuple[float, float]:
    """Best CPU µs and best wall µs per request over `rounds` rounds of `count` requests."""
    await warm(app, template, count)
    best_cpu = best_wall = float("inf")
    for _ in range(rounds):
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(count):
            await call(app, template)
        best_cpu = min(best_cpu, (time.process_time() - cpu) / count * 1e6)
        best_wall = min(best_wall, (time.perf_counter() - wall) / count * 1e6)
    return best_cpu, best_wall


def floor_app(floor_db: str) -> ASGIApp:
    os.environ["FLOOR_DB"] = floor_db
    path = kit_dir() / "floor" / "app.py"
    spec = importlib.util.spec_from_file_location("bench_floor_app", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app  # type: ignore[no-any-return]


async def main_async(args: argparse.Namespace) -> int:
    built = await ensure_database(args.rows)
    from bench.host import create_app

    # Counting instructions, the webhook worker's polling would land among the requests' at random.
    app = create_app(built["url"], webhooks=not args.instructions)
    stop = await lifespan(app)
    kinds = [k for k in (args.only.split(",") if args.only else PB_REQUESTS) if k]
    try:
        if args.profile:
            template = await pb_template(app, args.profile, built["token"])
            await measure(app, template, 300, 1)
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(args.requests):
                await call(app, template)
            profiler.disable()
            profiler.dump_stats("/tmp/fixed_cost.prof")
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(45)
            return 0
        floor = floor_app(built["floor_db"]) if args.floor else None
        if args.instructions:
            print(f"{'request':<10} {'pb instructions':>16}" + ("  floor instr.  ratio" if floor else ""))
            for kind in kinds:
                template = await pb_template(app, kind, built["token"])
                counted = await instructions(app, template, args.requests)
                line = f"{kind:<10} {counted:>16,.0f}"
                if floor is not None and kind in FLOOR_REQUESTS:
                    path, query, authorized = FLOOR_REQUESTS[kind]
                    template = scope_of(path, query, built["floor_token"] if authorized else None)
                    floor_counted = await instructions(floor, template, args.requests)
                    line += f" {floor_counted:>13,.0f} {counted / floor_counted:>6.2f}x"
                print(line, flush=True)
            return 0
        print(
            f"in process, uvloop, {args.rows:,} rows, {args.requests} requests x {args.rounds} rounds (best)"
        )
        print(
            f"{'request':<10} {'pb CPU µs':>10} {'pb wall µs':>11}"
            + (" floor CPU µs  ratio" if floor else "")
        )
        for kind in kinds:
            template = await pb_template(app, kind, built["token"])
            cpu, wall = await measure(app, template, args.requests, args.rounds)
            line = f"{kind:<10} {cpu:>10.1f} {wall:>11.1f}"
            if floor is not None and kind in FLOOR_REQUESTS:
                path, query, authorized = FLOOR_REQUESTS[kind]
                template = scope_of(path, query, built["floor_token"] if authorized else None)
                floor_cpu, _ = await measure(floor, template, args.requests, args.rounds)
                line += f" {floor_cpu:>12.1f} {cpu / floor_cpu:>6.2f}x"
            print(line, flush=True)
    finally:
        await stop()
    return 0


def run_on_uvloop(work: Coroutine[Any, Any, int]) -> int:
    """Runs `work` on uvloop, as uvicorn does, where it is installed (the bench extra)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(work)
    return uvloop.run(work)


def main(argv: list[str] | None = None) -> int:
    return run_on_uvloop(main_async(arguments(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    raise SystemExit(main())
