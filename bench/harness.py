"""`bash bench/run`: pb_headless against PocketBase, Directus tuned and the floor, on the same rows and load.

    bash bench/run                              # SQLite, 100,000 rows: pb, PocketBase, Directus, floor
    bash bench/run --rows 1000000               # the 1,000,000-row targets
    bash bench/run --database postgresql        # pb and the asyncpg floor (peers run on SQLite only)
    bash bench/run --database mariadb           # pb and the aiomysql floor
    bash bench/run --systems pb --duration 5    # a quick look at pb alone
    bash bench/run --only changes --database postgresql   # the change log section alone
    bash bench/run --only writers               # the change log under 16 writers, PostgreSQL

After the reads come the writes (bench/writes.py, `--no-writes` leaves them out): create, update and
delete under wrk on pb_headless, PocketBase and the floor, in a table of their own.

After pb_headless's table comes the change log's section (bench/changes.py, `--no-changes` leaves it
out): p50 of a create with and without the change log, and p50/p99 from a commit to its stream event
and to its webhook's arrival, on the database of `--database`.

Each system is started alone on loopback, every answer is checked (status 200, 20 rows, the right
total), then each request gets a warm-up and a measured `wrk -t2 -c16` run. The table goes to the
terminal and, with the raw figures, to the run's directory under /tmp/pb-bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import changes, dataset, load, pocketbase, report, servers, writers, writes
from bench.kit import KitMissing, kit_dir

WORK = Path(os.environ.get("PB_BENCH_WORK", "/tmp/pb-bench"))


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--systems",
        default="pb,pocketbase,directus,floor",
        help="comma list of pb, pocketbase, directus, floor (the peers run on SQLite only)",
    )
    parser.add_argument("--server", choices=tuple(servers.SERVERS), default="uvicorn")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="pb workers (one per core)")
    parser.add_argument(
        "--floor-workers",
        type=int,
        default=None,
        help="the floor's workers (default: as many as pb's, so both use the same cores)",
    )
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--only",
        default="",
        help="comma list of request labels (q0_ping … q9_count_none, w1_create, w2_update, w3_delete) "
        "and/or `changes` (the change log section)",
    )
    parser.add_argument("--no-writes", action="store_true", help="leave out the writes")
    parser.add_argument("--no-changes", action="store_true", help="leave out the change log section")
    parser.add_argument("--reuse", action="store_true", help="reuse the databases of the previous run")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="pb's lists each ask another list (an ignored parameter with a counter), so every one "
        "reads its page instead of being a kept answer (docs/caching.md)",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = arguments(argv)
    only = {label.strip() for label in args.only.split(",") if label.strip()}
    wants_changes = (
        "pb" in args.systems.split(",") and not args.no_changes and (not only or "changes" in only)
    )
    if only == {"changes"}:  # the change log section alone: no rows, no wrk, no peers
        return _changes_section(args.database, None)
    if only == {"writers"}:  # the change log under 16 writers, PostgreSQL (bench/writers.py)
        print(writers.measure(writers.ROWS, min(args.duration, 10), args.warmup, 2)["text"])
        return 0
    if args.floor_workers is None:
        args.floor_workers = args.workers
    try:
        kit_dir()
    except KitMissing as error:
        print(f"bench/run: {error}", file=sys.stderr)
        return 2
    wanted = [name.strip() for name in args.systems.split(",") if name.strip()]
    peers = [name for name in ("pocketbase", "directus") if name in wanted]
    if args.database != "sqlite" and peers:
        wanted = [name for name in wanted if name not in peers]
        print(
            f"bench/run: {' and '.join(peers)} run on SQLite only; the targets on this database are "
            "against its floor",
            file=sys.stderr,
        )
    work = WORK / f"{args.database}-{args.rows}"
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    prepared_file = work / "prepared.json"
    if args.reuse and prepared_file.is_file():
        raw = json.loads(prepared_file.read_text())
        raw["expected"] = dataset.Expected(**raw["expected"])
        prepared = dataset.Prepared(**raw)
    else:
        print(f"[bench] building {args.rows:,} rows on {args.database} in {work} …", file=sys.stderr)
        prepared = asyncio.run(dataset.prepare(args.database, args.rows, work, "directus" in wanted))
    tokens = {"pb": prepared.pb_token}
    if "pocketbase" in wanted:
        tokens["pocketbase"] = pocketbase.ensure(args.rows)
    out = WORK / "results" / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{args.database}-{args.rows}"
    out.mkdir(parents=True, exist_ok=True)
    plan = load.Load(args.threads, args.connections, args.duration, args.warmup)
    reqs = load.requests(prepared.expected)
    write_labels = () if args.no_writes else writes.LABELS
    if only:
        reqs = [r for r in reqs if r.label in only]
        write_labels = tuple(label for label in write_labels if label in only)
    results: dict[str, dict[str, dict]] = {}
    written: dict[str, dict[str, dict]] = {}
    for name in wanted:
        system = _system(name, prepared, args, work)
        if system is None:
            continue
        token = tokens.get(name, prepared.kit_token)
        if reqs:
            results[name] = _run_system(system, prepared, token, reqs, plan, out, args.fresh)
        if write_labels and name in writes.SYSTEMS:
            written[name] = writes.run(
                _write_system(name, prepared, args, work),
                token,
                _store(name, prepared),
                args.rows,
                plan,
                out,
                write_labels,
            )
    meta = {
        "database": args.database,
        "rows": args.rows,
        "threads": args.threads,
        "connections": args.connections,
        "duration": args.duration,
        "server": args.server,
        "workers": args.workers,
        "floor_workers": args.floor_workers,
        "cores": os.cpu_count(),
        "driver": servers.mariadb_driver() if args.database == "mariadb" else None,
        "started": started,
        "fresh": args.fresh,
    }
    text = report.table(results, reqs, meta) if results else ""
    if written:
        text += ("\n" if text else "") + report.writes_table(written, meta)
    (out / "results.md").write_text(text)
    (out / "meta.json").write_text(json.dumps(meta))
    print(text)
    print(f"[bench] figures in {out}", file=sys.stderr)
    return _changes_section(args.database, out) if wants_changes else 0


def _changes_section(database: str, out: Path | None) -> int:
    """The change log's cost and delays (bench/changes.py), printed as their own table."""
    print(f"[bench] the change log section on {database} …", file=sys.stderr)
    text = changes.changes_table(asyncio.run(changes.measure(database)))
    if out is None:
        out = WORK / "results" / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{database}-changes"
        out.mkdir(parents=True, exist_ok=True)
    (out / "changes.md").write_text(text)
    print(text)
    print(f"[bench] figures in {out / 'changes.md'}", file=sys.stderr)
    return 0


def _system(
    name: str, prepared: dataset.Prepared, args: argparse.Namespace, work: Path
) -> servers.System | None:
    if name == "pb":
        return servers.pb_system(prepared.pb_url, args.workers, args.server)
    if name == "floor":
        return servers.floor_system(prepared.database, prepared.floor_url, args.floor_workers)
    if name == "pocketbase":
        return servers.pocketbase_system()
    if name == "directus":
        if prepared.directus_db is None:
            print(
                "[bench] Directus is not set up (no /tmp/peer-directus): run "
                f"bash {kit_dir()}/peer-directus/setup.sh; measuring without it",
                file=sys.stderr,
            )
            return None
        return servers.directus_system(prepared.directus_db, work)
    raise SystemExit(f"bench/run: unknown system {name!r}")


def _write_system(
    name: str, prepared: dataset.Prepared, args: argparse.Namespace, work: Path
) -> servers.System:
    """The server the writes go to: as for the reads, but the floor is ours on SQLite too."""
    if name == "floor":
        return servers.floor_system(prepared.database, prepared.floor_url, args.floor_workers, writes=True)
    system = _system(name, prepared, args, work)
    assert system is not None
    return system


def _store(name: str, prepared: dataset.Prepared) -> writes.Store:
    """The system's database, reached beside its server (bench/writes.py)."""
    if name == "pocketbase":
        return writes.Store(str(pocketbase.DATA / "data.db"), text_ids=True)
    url = prepared.pb_url if name == "pb" else prepared.floor_url
    return writes.Store(url.removeprefix("sqlite:///") if url.startswith("sqlite:") else url)


def _run_system(
    system: servers.System,
    prepared: dataset.Prepared,
    token: str,
    reqs: list[load.Request],
    plan: load.Load,
    out: Path,
    fresh_lists: bool = False,
) -> dict[str, dict]:
    print(f"[bench] start {system.name}", file=sys.stderr)
    system.start(out / f"{system.name}.log")
    results = {}
    try:
        idle = system.rss_kib()
        for request in reqs:
            if request.pb_only and system.name != "pb":
                continue
            url = system.base + load.path_of(system, request.label, prepared.expected)
            extra: dict[str, str] = {}
            if request.pb_only:
                url, extra = load.prepared(request.label, url, token, prepared.expected)
            load.check(system, request.label, url, token, prepared.expected, extra)
            clients = None
            if system.name == "pb" and request.label in load.PER_CLIENT:
                clients = asyncio.run(dataset.client_tokens(prepared.pb_url))
            fresh = fresh_lists and system.name == "pb" and request.label in load.LISTS
            authorization = token if request.authorized else None
            result = load.measure(system, request.label, url, authorization, plan, out, extra, clients, fresh)
            result["rss_idle_kib"] = idle
            results[request.label] = result
            load.print_result(system.name, request.label, result, rss=True)
    finally:
        system.stop()
        time.sleep(1)
    return results


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
