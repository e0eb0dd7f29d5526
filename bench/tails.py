"""Where a request's long tail comes from, in process: latency of every request, and what overlapped it.

Drives the benchmark's host (bench/host.py, on the database of bench/fixed_cost.py) with `--clients`
tasks that each send one request after another, as wrk's connections do to one worker (wrk -c16 on
two workers: 8 each), and records each request's wall time. Around them it records every collection
of Python's garbage collector (`gc.callbacks`: generation, how long, how many objects it walked), the
reads the loop handed to a thread (database/sqlite/inline.py), and the kept caches' sizes. It prints,
per request kind, p50, p99, p99/p50, and how much of the slowest 1 % a collection overlapped.

    .venv/bin/python -m bench.tails                              # search and the 304, 8 clients
    .venv/bin/python -m bench.tails --only search --clients 1    # one request at a time
    .venv/bin/python -m bench.tails --gc unfrozen                # full collections walk every object
    .venv/bin/python -m bench.tails --no-webhooks                # without the webhook worker's polling

`--gc` chooses the collector's set-up before the requests: `host` (what bench/host.py does: the
objects of the start frozen, the default), `unfrozen` (gc.unfreeze(): every full collection walks
them too, as in a host that does not freeze), `off` (gc.disable(): nothing is collected, to see the
tail without it). Wall times depend on the machine's
load; the collector's figures (objects walked, collections per 1,000 requests) do not.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import statistics
import sys
import time
from typing import Any

from bench.fixed_cost import call, ensure_database, lifespan, run_on_uvloop, scope_of, sent_messages

KINDS = {
    "health": ("/api/pb/v1/health", "", False),
    "show": ("/api/pb/v1/objects/articles/12345", "", True),
    "list": ("/api/pb/v1/objects/articles", "limit=20", True),
    "search": ("/api/pb/v1/objects/articles", "search=lorem&limit=20", True),
    "not_modified": ("/api/pb/v1/objects/articles", "limit=20", True),  # with the list's ETag
}


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench.tails", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=4000, help="requests per kind")
    parser.add_argument("--clients", type=int, default=8, help="concurrent senders (8: wrk -c16, 2 workers)")
    parser.add_argument("--only", default="search,not_modified", help=f"comma list of {', '.join(KINDS)}")
    parser.add_argument("--gc", choices=("host", "unfrozen", "off"), default="host")
    parser.add_argument("--no-webhooks", action="store_true", help="start the API without its webhook worker")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per kind (each printed)")
    parser.add_argument(
        "--touch-every",
        type=float,
        default=None,
        help="record a token's use at most this often (seconds; the library's: 60), to see its write "
        "in a short run",
    )
    parser.add_argument(
        "--turns",
        choices=("on", "off", "alternate"),
        default="on",
        help="SQLite reads on threads in turns (database/sqlite/turns.py), all at once as before them "
        "(off), or round by round each way (alternate: the machine's load falls on both alike)",
    )
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=None,
        help="sys.setswitchinterval (seconds) before the requests",
    )
    return parser.parse_args(argv)


class Spans:
    """Wall spans of some of the library's coroutines (by name), recorded while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.seen: dict[str, list[tuple[float, float]]] = {}
        self.cost = (0.0, 0.0, 0.0)  # CPU µs, voluntary and involuntary context switches per request

    def watch(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)
        spans = self

        async def watched(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                if spans.on:
                    spans.seen.setdefault(label, []).append((started, time.perf_counter()))

        setattr(owner, name, watched)


WATCHED = (  # (module, object or None, coroutine function, label)
    ("pb_headless.tokens.store", "TokenStore", "touch", "token use written"),
    ("pb_headless.webhooks.worker", "WebhookWorker", "run_once", "webhook worker step"),
    ("pb_headless.database.totals", "Totals", "_count", "count taken"),
    ("pb_headless.changes.sync", "TriggerSync", "_prune", "change log pruned"),
)


def watch_all(spans: Spans) -> None:
    import importlib

    for module, owner, name, label in WATCHED:
        found = importlib.import_module(module)
        spans.watch(getattr(found, owner) if owner else found, name, label)


class Collections:
    """Every collection of the garbage collector while `on`: (start, stop, generation, objects walked)."""

    def __init__(self) -> None:
        self.on = False
        self.seen: list[tuple[float, float, int, int]] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            walked = info.get("collected", 0) + info.get("uncollectable", 0)
            self.seen.append((self._started, time.perf_counter(), info["generation"], walked))


async def drive(
    app: Any, template: dict[str, Any], count: int, clients: int, collections: Collections, work: Spans
) -> list[tuple[float, float]]:
    """`count` requests from `clients` senders; each request's (start, stop)."""
    spans: list[tuple[float, float]] = []
    left = count

    async def sender() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            started = time.perf_counter()
            status, body = await call(app, template)
            spans.append((started, time.perf_counter()))
            if status not in (200, 304):
                raise RuntimeError(f"HTTP {status}: {body[:200]!r}")

    collections.on = work.on = True
    used = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.gather(*(sender() for _ in range(clients)))
    after = resource.getrusage(resource.RUSAGE_SELF)
    collections.on = work.on = False
    work.cost = (
        (after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime) / count * 1e6,
        (after.ru_nvcsw - used.ru_nvcsw) / count,
        (after.ru_nivcsw - used.ru_nivcsw) / count,
    )
    return spans


def report(
    kind: str,
    spans: list[tuple[float, float]],
    collections: Collections,
    handed: tuple[int, int],
    work: Spans,
) -> tuple[float, float]:
    walls = sorted((stop - start) * 1000 for start, stop in spans)
    p50 = statistics.median(walls)
    p99 = walls[int(len(walls) * 0.99) - 1]
    slow = [(start, stop) for start, stop in spans if (stop - start) * 1000 >= p99]
    seen = collections.seen
    by_generation = {g: [s for s in seen if s[2] == g] for g in (0, 1, 2)}
    overlapped = sum(1 for start, stop in slow if any(a < stop and b > start for a, b, _, _ in seen))
    full = [s for s in seen if s[2] == 2]
    print(
        f"{kind:<22} {len(walls):>6} {p50:>7.2f} {walls[int(len(walls) * 0.9) - 1]:>7.2f} {p99:>7.2f} "
        f"{walls[-1]:>7.2f} {p99 / p50:>6.2f}x  "
        + " ".join(
            f"g{g}:{len(items)}/{sum(b - a for a, b, _, _ in items) * 1000:.1f}ms"
            + (f"(max {max(b - a for a, b, _, _ in items) * 1000:.1f})" if items else "")
            for g, items in by_generation.items()
        )
        + f"  slowest 1%: {overlapped}/{len(slow)} overlap a collection"
        + (f"; full collections {len(full)}" if full else "")
        + f"; handed to a thread by time/size {handed[0]}/{handed[1]}",
        flush=True,
    )
    cpu, voluntary, involuntary = work.cost
    print(
        f"{'':<22} CPU {cpu:.0f} µs/request (every thread); context switches/request: "
        f"{voluntary:.2f} voluntary, {involuntary:.2f} involuntary"
    )
    result = (p99 / p50, cpu)
    for label, found in sorted(work.seen.items()):
        hit = sum(1 for start, stop in slow if any(a < stop and b > start for a, b in found))
        longest = max(b - a for a, b in found) * 1000
        print(
            f"{'':<22} {label}: {len(found)} (longest {longest:.1f} ms), "
            f"overlapping {hit}/{len(slow)} of the slowest 1%"
        )
    return result


def take_turns(database: Any, on: bool) -> None:
    """Reads on threads in turns (the library's way), or all at once as before turns (`NO_TURN`)."""
    from pb_headless.database.accelerator_interface import NO_TURN
    from pb_headless.database.accelerators import accelerator_of

    accelerator = accelerator_of(database)
    if on:
        accelerator.__dict__.pop("thread_turn", None)
    else:
        accelerator.thread_turn = lambda _: NO_TURN  # type: ignore[method-assign]


def full_collection_ms() -> float:
    """The best of five full collections' wall time, in ms (what one costs the loop when it comes)."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        gc.collect()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def set_up_collector(mode: str) -> None:
    if mode == "unfrozen":
        gc.unfreeze()
    elif mode == "off":
        gc.disable()


async def main_async(args: argparse.Namespace) -> int:
    built = await ensure_database(args.rows)
    from bench.host import create_app
    from pb_headless.database.accelerators import accelerator_of

    app = create_app(built["url"], webhooks=not args.no_webhooks)
    stop = await lifespan(app)
    set_up_collector(args.gc)
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    print(f"a full collection now: {full_collection_ms():.1f} ms (best of 5)")
    collections = Collections()
    gc.callbacks.append(collections)
    work = Spans()
    watch_all(work)
    if args.touch_every is not None:
        from datetime import timedelta

        from pb_headless.auth import authenticator
        from pb_headless.tokens import store

        authenticator.LAST_USED_RESOLUTION = store.LAST_USED_RESOLUTION = timedelta(seconds=args.touch_every)
    database = app.api.database  # type: ignore[attr-defined]
    inline = getattr(accelerator_of(database), "inline", None)
    print(
        f"in process, {args.rows:,} rows, {args.clients} clients, collector: {args.gc} "
        f"(frozen {gc.get_freeze_count():,}, walked by a full collection {len(gc.get_objects()):,}), "
        f"webhook worker {'off' if args.no_webhooks else 'on'}, "
        f"switch interval {sys.getswitchinterval() * 1000:g} ms"
    )
    print(f"{'request':<22} {'n':>6} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} {'max ms':>7} {'p99/p50':>7}")
    try:
        for kind in [k for k in args.only.split(",") if k]:
            path, query, authorized = KINDS[kind]
            template = scope_of(path, query, built["token"] if authorized else None)
            if kind == "not_modified":
                _, _ = await call(app, template)
                tag = await _etag(app, template)
                template["headers"] = [*template["headers"], (b"if-none-match", tag)]
            for _ in range(300):  # warm: compiled statements, kept counts, plans
                await call(app, template)
            ratios: dict[str, list[float]] = {}
            for round_number in range(args.rounds):
                turns = args.turns if args.turns != "alternate" else ("on", "off")[round_number % 2]
                take_turns(database, turns == "on")
                collections.seen.clear()
                work.seen.clear()
                before = (inline.over_time, inline.over_size) if inline is not None else (0, 0)
                spans = await drive(app, template, args.requests, args.clients, collections, work)
                after = (inline.over_time, inline.over_size) if inline is not None else (0, 0)
                label = kind if args.turns == "on" else f"{kind} ({'turns' if turns == 'on' else 'at once'})"
                ratio = report(label, spans, collections, (after[0] - before[0], after[1] - before[1]), work)
                ratios.setdefault(turns, []).append(ratio)
            if args.turns == "alternate":
                for turns, found in ratios.items():
                    print(
                        f"{'in turns' if turns == 'on' else 'at once'}: median p99/p50 "
                        f"{statistics.median(r[0] for r in found):.2f}x, median CPU "
                        f"{statistics.median(r[1] for r in found):.0f} µs/request over {len(found)} rounds"
                    )
    finally:
        gc.callbacks.remove(collections)
        gc.enable()
        await stop()
    return 0


async def _etag(app: Any, template: dict[str, Any]) -> bytes:
    start = next(m for m in await sent_messages(app, template) if m["type"] == "http.response.start")
    return next(value for name, value in start["headers"] if name.lower() == b"etag")


def main(argv: list[str] | None = None) -> int:
    return run_on_uvloop(main_async(arguments(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    raise SystemExit(main())
