"""What the change log costs writers under concurrency: creates per second with 16 concurrent writers,
the log on and off, on PostgreSQL with two instances (docs/performance.md).

    bash bench/run --only writers                  # this section alone (PostgreSQL)
    .venv/bin/python -m bench.writers [--rows 10000] [--duration 10] [--rounds 2]

Two databases on the PostgreSQL server, each with the benchmark's `articles` (bench/dataset.py):
one served with the change log (its trigger installed when the instances start), one served with
`change_log=False`, which never had a trigger. Each is served by two uvicorn processes of one worker
(two instances on one database), and two `wrk -t1 -c8` send creates to them at once: 16 writers.
Off and on take turns (`--rounds` of each, after a warm-up of each) so both see the same machine.
While they run, the sessions of the database are sampled every 50 ms in `pg_stat_activity`: what a
writer waits for (a lock on the log's head row shows as `Lock: transactionid` or `tuple`).
Afterwards the log must hold one entry per create with the log on, and no trigger the log off.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from databases import Database

from bench import dataset, servers, writes
from bench.servers import CLK_TCK, System

HERE = Path(__file__).resolve().parent
WORK = Path(os.environ.get("PB_BENCH_WORK", "/tmp/pb-bench"))
PORT = 8070 + int(os.environ.get("PB_BENCH_PORT_OFFSET", "0"))
WRK = ("wrk", "-t1", "-c8", "--timeout", "10s", "--latency")
ROWS = 10_000  # the head row's turns do not depend on the table's size
TARGET = 0.15  # at most 15 % fewer creates per second with the change log


def instances(url: str, change_log: bool) -> list[System]:
    """Two uvicorn processes of one worker each on one database."""
    found = []
    for number in range(2):
        port = PORT + number + (0 if change_log else 2)
        env = {"PB_BENCH_URL": url, "PB_BENCH_CHANGE_LOG": "1" if change_log else "0"}
        command, env = servers.uvicorn("bench.host:app", port, 1, env)
        base = f"http://127.0.0.1:{port}"
        found.append(
            System("pb", command, env, base, "/api/pb/v1/health", "/api/pb/v1", "/objects/articles", "", "")
        )
    return found


def _sample(url: str, stop: threading.Event, waits: collections.Counter) -> None:
    """What the database's active sessions wait for, every 50 ms, until `stop`."""

    async def run() -> None:
        name = url.rsplit("/", 1)[1].split("?", 1)[0]
        async with Database(url.split("?", 1)[0]) as database:
            while not stop.is_set():
                rows = await database.fetch_all(
                    "SELECT coalesce(wait_event_type || ': ' || wait_event, 'on CPU') FROM pg_stat_activity "
                    "WHERE datname = :name AND state = 'active' AND pid <> pg_backend_pid()",
                    {"name": name},
                )
                waits.update(str(row[0]) for row in rows)
                waits["(samples)"] += 1
                await asyncio.sleep(0.05)

    asyncio.run(run())


def burst(
    systems: list[System], token: str, seconds: int, out: Path, tag: str, url: str | None = None
) -> dict[str, Any]:
    """16 writers (two wrk of 8 connections, one per instance) for `seconds`: creates per second,
    latency, the instances' CPU per create, the database's waits when `url` is given."""
    env = {
        **os.environ,
        "WRITE_KIND": "create",
        "WRITE_AUTH": f"Bearer {token}",
        "WRITE_BODY": writes.body("pb", "create"),
        "WRITE_PATH": "/api/pb/v1/objects/articles",
        "WRITE_THREADS": "1",
        "WRK_REPORT": str(HERE / "wrk_report.lua"),
    }
    files = [out / f"writers.{tag}.{number}.json" for number in range(len(systems))]
    waits: collections.Counter = collections.Counter()
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(url, stop, waits)) if url else None
    ticks = sum(system.cpu_ticks() for system in systems)
    started = time.monotonic()
    if sampler:
        sampler.start()
    runs = [
        subprocess.Popen(
            [
                *WRK[:-1],
                f"-d{seconds}s",
                "-s",
                str(HERE / "writes.lua"),
                system.base + "/api/pb/v1/objects/articles",
            ],
            env={**env, "WRK_OUT": str(path)},
            stdout=subprocess.DEVNULL,
        )
        for system, path in zip(systems, files, strict=True)
    ]
    for run in runs:
        run.wait(seconds + 60)
    stop.set()
    if sampler:
        sampler.join()
    elapsed = time.monotonic() - started
    ticks = sum(system.cpu_ticks() for system in systems) - ticks
    figures = [json.loads(path.read_text()) for path in files]
    requests = sum(f["requests"] for f in figures)
    return {
        "requests": requests,
        "rps": sum(f["rps"] for f in figures),
        "p50_ms": max(f["lat_p50_us"] for f in figures) / 1000,
        "p99_ms": max(f["lat_p99_us"] for f in figures) / 1000,
        "errors": sum(f["err_status"] + f["err_timeout"] for f in figures),
        "cpu_us": ticks / CLK_TCK * 1e6 / requests if requests else 0.0,
        "elapsed": elapsed,
        "waits": dict(waits),
        "load": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
    }


async def _count(url: str, sql: str) -> int:
    async with Database(url.split("?", 1)[0]) as database:
        return int(await database.fetch_val(sql))


def measure(rows: int, duration: int, warmup: int, rounds: int) -> dict[str, Any]:
    work = WORK / "writers"
    work.mkdir(parents=True, exist_ok=True)
    out = WORK / "results" / f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-postgresql-writers"
    out.mkdir(parents=True, exist_ok=True)
    built = {
        log: asyncio.run(dataset.build_pb("postgresql", rows, work, role=f"writers_{'on' if log else 'off'}"))
        for log in (False, True)
    }
    fleets = {log: instances(built[log][0], log) for log in (False, True)}
    results: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    try:
        for log in (False, True):
            for number, system in enumerate(fleets[log]):
                system.start(out / f"writers.{'on' if log else 'off'}.{number}.log")
        entries_before = asyncio.run(_count(built[True][0], "SELECT count(*) FROM pb_changes"))
        for log in (False, True):
            burst(fleets[log], built[log][1], warmup, out, f"warmup-{log}")
        for number in range(rounds):
            for log in (False, True) if number % 2 == 0 else (True, False):
                tag = f"{'on' if log else 'off'}-{number}"
                result = burst(fleets[log], built[log][1], duration, out, tag, built[log][0])
                results[log].append(result)
                print(
                    f"  change log {'on ' if log else 'off'} round {number}: {result['rps']:8.1f} creates/s  "
                    f"p50 {result['p50_ms']:6.1f} ms  p99 {result['p99_ms']:7.1f} ms  "
                    f"cpu {result['cpu_us']:6.0f} µs/create  errors {result['errors']}  "
                    f"load {result['load']}",
                    file=sys.stderr,
                )
    finally:
        for fleet in fleets.values():
            for system in fleet:
                system.stop()
    on_url, off_url = built[True][0], built[False][0]
    trigger_sql = "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'pbchg_%'"
    created_on = asyncio.run(_count(on_url, "SELECT count(*) FROM articles")) - rows
    figures = {
        "rows": rows,
        "duration": duration,
        "rounds": rounds,
        "off": results[False],
        "on": results[True],
        "triggers_on": asyncio.run(_count(on_url, trigger_sql)),
        "triggers_off": asyncio.run(_count(off_url, trigger_sql)),
        "created_on": created_on,
        "entries_on": asyncio.run(_count(on_url, "SELECT count(*) FROM pb_changes")) - entries_before,
    }
    (out / "writers.json").write_text(json.dumps(figures, indent=1))
    text = table(figures)
    (out / "writers.md").write_text(text)
    print(f"[bench] figures in {out}", file=sys.stderr)
    return {"text": text, **figures}


def _total(runs: list[dict[str, Any]], key: str) -> float:
    return sum(run[key] for run in runs)


def table(figures: dict[str, Any]) -> str:
    """Creates per second, off and on, the ratio and the target; what the writers waited for."""
    lines = [
        f"Change log under 16 concurrent writers: PostgreSQL, two instances (uvicorn, one worker each) on "
        f"one database, {figures['rows']:,} rows; two wrk -t1 -c8, {figures['rounds']} × "
        f"{figures['duration']} s of each, taking turns",
        "",
        "| change log | creates/s | p50 ms | p99 ms | CPU µs per create (both instances) | errors "
        "| load avg |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    rps = {}
    for key, name in (("off", "off"), ("on", "on (trigger → head row)")):
        runs = figures[key]
        seconds = _total(runs, "elapsed")
        rps[key] = _total(runs, "requests") / seconds if seconds else 0.0
        cpu = sum(r["cpu_us"] * r["requests"] for r in runs) / max(1, _total(runs, "requests"))
        lines.append(
            f"| {name} | {rps[key]:,.0f} | {max(r['p50_ms'] for r in runs):.1f} | "
            f"{max(r['p99_ms'] for r in runs):.1f} | {cpu:,.0f} | {int(_total(runs, 'errors'))} | "
            f"{runs[-1]['load']} |"
        )
    fewer = 1 - rps["on"] / rps["off"] if rps["off"] else 0.0
    lines += [
        "",
        f"- with the change log: {fewer:.1%} fewer creates per second "
        f"({rps['on'] / rps['off']:.2f}× the rate "
        "without it)"
        if rps["off"]
        else "- no creates without the change log",
        f"- [{'met' if fewer <= TARGET else 'NOT met'}] change log under 16 concurrent writers: ≤ 15 % fewer "
        f"creates per second ({fewer:.1%})",
        f"- triggers: {figures['triggers_on']} with the log, {figures['triggers_off']} without; log entries "
        f"written with the log {figures['entries_on']:,} for {figures['created_on']:,} rows created",
        "",
        "What the database's active sessions were doing (`pg_stat_activity`, sampled every 50 ms):",
        "",
        "| change log | "
        + " | ".join(("on CPU", "Lock: transactionid", "Lock: tuple", "other waits"))
        + " |",
        "|---|---:|---:|---:|---:|",
    ]
    for key in ("off", "on"):
        waits: collections.Counter = collections.Counter()
        for run in figures[key]:
            waits.update(run["waits"])
        samples = waits.pop("(samples)", 0) or 1
        named = ("on CPU", "Lock: transactionid", "Lock: tuple")
        other = sum(v for k, v in waits.items() if k not in named)
        cells = [f"{waits.get(k, 0) / samples:.2f}" for k in named] + [f"{other / samples:.2f}"]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    lines += ["", "(sessions per sample: how many of the writers' connections were in that state at once)"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"[bench] change log under 16 writers on PostgreSQL, {args.rows:,} rows …", file=sys.stderr)
    print(measure(args.rows, args.duration, args.warmup, args.rounds)["text"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
