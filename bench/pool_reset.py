"""PostgreSQL: asyncpg's pool resetting each connection given back to it, against giving it back as it is.

By default asyncpg runs its reset statement (`SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *;
RESET ALL;`) on every connection returned to its pool: one more round trip per request. A host whose
own code leaves no session state behind may pass a reset that does nothing (docs/deployment.md). This
serves the benchmark's host both ways, by turns, on the database of the last PostgreSQL run, and prints
rps and the server's CPU per request for each:

    bash bench/run --database postgresql --rows 1000000 --systems pb --no-changes   # builds the rows
    .venv/bin/python -m bench.pool_reset [--rows 1000000] [--rounds 2] [--duration 10]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench.load import Load, measure
from bench.servers import pb_system

REQUESTS = {
    "ping": "/health",
    "show": "/objects/articles/12345",
    "page, no count": "/objects/articles?limit=20&count=none",
    "page with total": "/objects/articles?limit=20",
}


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.pool_reset", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=int, default=10)
    options = parser.parse_args()
    prepared = Path(f"/tmp/pb-bench/postgresql-{options.rows}/prepared.json")
    if not prepared.is_file():
        raise SystemExit(f"{prepared} is missing: run bench/run --database postgresql first")
    built = json.loads(prepared.read_text())
    load = Load(duration=options.duration)
    out = Path(tempfile.mkdtemp(prefix="pb-pool-reset-"))
    print(f"postgresql, {options.rows:,} rows; wrk -t2 -c16 -d{load.duration}s; pb_headless on 2 workers")
    print(f"{'round':>5}  {'reset':<8} {'request':<16} {'rps':>8} {'p50 ms':>7} {'CPU µs':>7}")
    for round_ in range(1, options.rounds + 1):
        for keep in (False, True):
            system = pb_system(built["pb_url"], 2, "uvicorn")
            system.env["PB_BENCH_KEEP_SESSION"] = "1" if keep else "0"
            system.start(out / f"pb-{round_}-{int(keep)}.log")
            try:
                for label, path in REQUESTS.items():
                    token = None if label == "ping" else built["pb_token"]
                    url = system.base + system.prefix + path
                    result = measure(system, label.replace(" ", "_").replace(",", ""), url, token, load, out)
                    print(
                        f"{round_:>5}  {'none' if keep else 'asyncpg':<8} {label:<16} "
                        f"{result['rps']:>8,.0f} {result['lat_p50_us'] / 1000:>7.1f} "
                        f"{result['cpu_us_per_request']:>7,.0f}",
                        flush=True,
                    )
            finally:
                system.stop()


if __name__ == "__main__":
    main()
