"""A flood of distinct query shapes against a real server: RSS must level off (docs/hardening.md).

    .venv/bin/python bench/query_shapes.py --database postgresql [--shapes 15000] [--port 8123]
    .venv/bin/python bench/query_shapes.py --database mariadb --url mysql+asyncmy://root@127.0.0.1:3306
    .venv/bin/python bench/query_shapes.py --database sqlite

It initialises examples/site in a database of its own (PostgreSQL and MariaDB: a new database on the
server of `--url`, dropped at the end; SQLite: a file in a temporary folder), makes a token, serves
the site with uvicorn in one process (`python -m examples.site serve`), and sends `--shapes` list
requests to `articles`, each a shape no earlier one had: a `fields=` subset × a `sort=` × `with=` or
not × the length of a `filter[views][in]` list (1 to 100). It prints the server's RSS every 1,000 requests and
its growth after the first 1,000 and 3,000, with the server's CPU µs per request and the rate (read
the CPU column on a loaded machine: the rate follows the load of other processes). Every answer
must be a 200; the run stops at the first other one.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx

REPOSITORY = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
SERVERS = {"postgresql": "postgresql://postgres@127.0.0.1:5432", "mariadb": "mysql://root@127.0.0.1:3306"}
FIELDS = ("title", "body", "category", "price", "views", "featured", "published_at", "author_id")
SORTS = (
    "",
    "id",
    "-id",
    "title",
    "-title",
    "price",
    "-price",
    "views",
    "-views",
    "published_at",
    "-published_at",
)
CLIENTS = 4
PER_ADDRESS = 100  # requests from one client address (the site trusts 127.0.0.1 as its proxy)


def shapes() -> Iterator[str]:
    """Distinct query strings: 255 field subsets × 11 sorts × `with=` or not, each with a
    `filter[views][in]` list of every length from 1 to 100 (the most a list takes) in turn, so long
    lists come from the start, as an attacker would send them."""
    subsets = [
        ",".join(subset)
        for size in range(1, len(FIELDS) + 1)
        for subset in itertools.combinations(FIELDS, size)
    ]
    for fields, sort, related in itertools.product(subsets, SORTS, (False, True)):
        for length in range(1, 101):
            values = ",".join(str(number) for number in range(length))
            query = f"fields={fields}&filter[views][in]={values}&per_page=2"
            yield query + (f"&sort={sort}" if sort else "") + ("&with=author" if related else "")


def resident(pid: int) -> int:
    with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        parts = stat.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def run(command: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(command, env=env, cwd=REPOSITORY, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def own_database(kind: str, server: str) -> tuple[str, object]:
    """A new database on the server, and how to drop it."""
    import sqlalchemy as sa

    name = f"pbqs_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    scheme, rest = server.split("://", 1)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a stopped run still drops its database
    sync = {"postgresql": "postgresql+psycopg", "mariadb": "mysql+pymysql"}[kind]
    admin_url = f"{sync}://{rest}/" + ("postgres" if kind == "postgresql" else "")
    try:
        engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect():
            pass
    except Exception:  # no sync driver here: create it through the async one
        engine = None
    extra = " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci" if kind == "mariadb" else ""

    async def execute(sql: str) -> None:
        from sqlalchemy.ext.asyncio import create_async_engine

        async_scheme = {"postgresql": "postgresql+asyncpg", "mariadb": "mysql+aiomysql"}[kind]
        if "+" in scheme:
            async_scheme = scheme
        target = f"{async_scheme}://{rest}/" + ("postgres" if kind == "postgresql" else "")
        made = create_async_engine(target, isolation_level="AUTOCOMMIT")
        try:
            async with made.connect() as connection:
                await connection.execute(sa.text(sql))
        finally:
            await made.dispose()

    def do(sql: str) -> None:
        if engine is not None:
            with engine.connect() as connection:
                connection.execute(sa.text(sql))
        else:
            asyncio.run(execute(sql))

    do(f"CREATE DATABASE {name}{extra}")
    return f"{server}/{name}", lambda: do(f"DROP DATABASE IF EXISTS {name}")


async def flood(base: str, token: str, pid: int, total: int) -> list[tuple[int, int, float, float]]:
    queries = itertools.islice(shapes(), total)
    marks: list[tuple[int, int, float, float]] = [(0, resident(pid), cpu_seconds(pid), time.monotonic())]
    done = 0
    addresses = (f"10.{a}.{b}.{c}" for a in itertools.count(1) for b in range(256) for c in range(1, 255))

    async def client() -> None:
        nonlocal done
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            for count, query in enumerate(queries):
                if count % PER_ADDRESS == 0:
                    headers["X-Forwarded-For"] = next(addresses)
                response = await http.get(f"/api/pb/v1/objects/articles?{query}", headers=headers)
                if response.status_code != 200:
                    raise SystemExit(f"{query} → {response.status_code} {response.text[:300]}")
                done += 1
                if done % 1000 == 0:
                    marks.append((done, resident(pid), cpu_seconds(pid), time.monotonic()))
                    _, rss, cpu, at = marks[-1]
                    _, _, cpu0, at0 = marks[-2]
                    print(
                        f"{done:>7} shapes  RSS {rss / 2**20:6.1f} MB  "
                        f"CPU {1e6 * (cpu - cpu0) / 1000:6.0f} µs/req  "
                        f"{1000 / (at - at0):5.0f} req/s",
                        flush=True,
                    )

    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql", "mariadb"), default="postgresql")
    parser.add_argument("--url", help="the server, without a database name (default: the local one)")
    parser.add_argument("--shapes", type=int, default=15_000)
    parser.add_argument("--port", type=int, default=8123)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="pb-shapes-"))
    if args.database == "sqlite":
        url, drop = f"sqlite:///{folder / 'site.db'}", (lambda: None)
    else:
        url, drop = own_database(args.database, (args.url or SERVERS[args.database]).rstrip("/"))
    env = {
        **os.environ,
        "PB_DATABASE_URL": url,
        "PB_TRUSTED_PROXIES": "127.0.0.1",
        "PB_SECRET_KEY": "query-shapes-" + uuid.uuid4().hex,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    server = None
    try:
        run([PYTHON, "-m", "examples.site", "init"], env)
        token = run(
            [str(REPOSITORY / ".venv" / "bin" / "pb-headless"), "--database", url, "token", "create",
             "--name", f"shapes-{os.getpid()}", "--scopes", "*"],
            env,
        ).strip().splitlines()[-1]  # fmt: skip
        server = subprocess.Popen(
            [PYTHON, "-m", "examples.site", "serve", "--port", str(args.port)],
            env=env,
            cwd=REPOSITORY,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{args.port}"
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/pb/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        print(f"{args.database} ({url.split('://')[0]}), {args.shapes:,} distinct shapes, {CLIENTS} clients")
        marks = asyncio.run(flood(base, token, server.pid, args.shapes))
        end = marks[-1][1]
        for start in (1000, 3000):
            found = [rss for done, rss, _, _ in marks if done == start]
            if found:
                print(
                    f"RSS growth from {start:,} to {marks[-1][0]:,} shapes: "
                    f"{(end - found[0]) / 2**20:+.1f} MB"
                )
        cpu = (marks[-1][2] - marks[0][2]) / max(1, marks[-1][0])
        print(f"server CPU {cpu * 1e6:.0f} µs/req over the run; RSS at the end {end / 2**20:.1f} MB")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        drop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
