"""Filters across relations: p50 and p95 of a to-one and a to-many path filter (docs/query.md).

Builds, once per database and size, declared models with the indexes docs/query.md names for paths:
`rel_posts` (`--rows` rows), `rel_authors` (one per 100 posts), `rel_tags` (100) and `rel_post_tags`
(two tags per post), then serves them through `HeadlessAPI` in this process (httpx's ASGI transport,
one request at a time, no network) and prints the latency of each request kind:

    .venv/bin/python -m bench.relation_filters --database sqlite --rows 100000 [--requests 100]

A one-client measurement of the statements' cost, not the benchmark's load (bench/run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import time
from pathlib import Path

import httpx
import sqlalchemy as sa
from databases import Database
from sqlalchemy.ext.asyncio import create_async_engine

from bench.dataset import ASYNC_DRIVERS, SERVERS
from pb_headless import ApiRegistry, HeadlessAPI, TokenStore, install

CHUNK = 5000
TAGS = 100
POSTS_PER_AUTHOR = 100

metadata = sa.MetaData()
authors = sa.Table(
    "rel_authors",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(100), nullable=False, index=True),
    sa.Column("published", sa.Boolean, nullable=False),
)
posts = sa.Table(
    "rel_posts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("rel_authors.id"), nullable=True, index=True),
    sa.Column("published", sa.Boolean, nullable=False),
)
tags = sa.Table(
    "rel_tags",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("slug", sa.String(50), nullable=False, index=True),
    sa.Column("published", sa.Boolean, nullable=False),
)
post_tags = sa.Table(
    "rel_post_tags",
    metadata,
    sa.Column("post_id", sa.Integer, sa.ForeignKey("rel_posts.id"), primary_key=True),
    sa.Column("tag_id", sa.Integer, sa.ForeignKey("rel_tags.id"), primary_key=True),
    # Covering: a tag's posts are read from the index alone (five times faster on SQLite at 1M rows).
    sa.Index("ix_rel_post_tags_tag_post", "tag_id", "post_id"),
)
DECLARATIONS = {
    "posts": {
        "model": posts,
        "fields": ["title", "author_id"],
        "filterable": ["title", "author.name", "tags.slug"],
        "with": ["author", "tags"],
    },
    "authors": {"model": authors, "fields": ["name"]},
    "tags": {"model": tags, "fields": ["slug"]},
}


def database_url(kind: str, rows: int) -> str:
    name = f"pb_bench_rel_{rows}"
    if kind == "sqlite":
        Path("/tmp/pb-bench").mkdir(parents=True, exist_ok=True)
        return f"sqlite:////tmp/pb-bench/{name}.db"
    return f"{SERVERS[kind]}/{name}"


async def build(kind: str, url: str, rows: int) -> None:
    """The tables and rows, unless an earlier run left them complete."""
    if kind != "sqlite":
        server = create_async_engine(SERVERS[kind].replace(*_scheme(kind)), isolation_level="AUTOCOMMIT")
        async with server.connect() as connection:
            exists = "IF NOT EXISTS " if kind == "mariadb" else ""
            with contextlib.suppress(sa.exc.DBAPIError):  # PostgreSQL: it exists
                await connection.execute(sa.text(f"CREATE DATABASE {exists}{url.rsplit('/', 1)[1]}"))
        await server.dispose()
    engine = create_async_engine(url.replace(*_scheme(kind)))
    async with engine.begin() as connection:
        await connection.run_sync(metadata.create_all)
        have = (await connection.execute(sa.select(sa.func.count()).select_from(post_tags))).scalar()
    if have != 2 * rows:
        await _fill(engine, rows)
    # The planner's statistics and PostgreSQL's visibility map (index-only scans), as a live site has
    # them once autovacuum has run.
    engine = engine.execution_options(isolation_level="AUTOCOMMIT")
    async with engine.connect() as connection:
        for table in metadata.sorted_tables:
            statement = {"mariadb": "ANALYZE TABLE", "postgresql": "VACUUM ANALYZE"}.get(kind, "ANALYZE")
            await connection.execute(sa.text(f"{statement} {table.name}"))
    await engine.dispose()


def _scheme(kind: str) -> tuple[str, str]:
    plain = {"sqlite": "sqlite", "postgresql": "postgresql", "mariadb": "mysql"}[kind]
    return f"{plain}://", f"{ASYNC_DRIVERS[kind]}://"


async def _fill(engine, rows: int) -> None:
    random_ = random.Random(42)
    async with engine.begin() as connection:
        for table in reversed(metadata.sorted_tables):
            await connection.execute(table.delete())
        writers = max(1, rows // POSTS_PER_AUTHOR)
        await connection.execute(
            authors.insert(),
            [{"id": i, "name": f"author-{i}", "published": i % 50 != 0} for i in range(1, writers + 1)],
        )
        await connection.execute(
            tags.insert(), [{"id": i, "slug": f"tag-{i}", "published": True} for i in range(1, TAGS + 1)]
        )
        for start in range(1, rows + 1, CHUNK):
            ids = range(start, min(rows, start + CHUNK - 1) + 1)
            await connection.execute(
                posts.insert(),
                [
                    {
                        "id": i,
                        "title": f"post {i}",
                        "author_id": random_.randint(1, writers),
                        "published": True,
                    }
                    for i in ids
                ],
            )
            pairs = [(i, t) for i in ids for t in random_.sample(range(1, TAGS + 1), 2)]
            await connection.execute(post_tags.insert(), [{"post_id": i, "tag_id": t} for i, t in pairs])
    print(f"built {rows:,} posts", flush=True)


async def measure(url: str, rows: int, requests: int) -> None:
    database = Database(url)
    await database.connect()
    await install(database)
    registry = ApiRegistry()
    for name, declaration in DECLARATIONS.items():
        registry.register(name, declaration)
    api = HeadlessAPI(database, registry, rate_limit=1_000_000_000, webhooks=False)
    await api.startup()
    _, token = await TokenStore(database).create(f"bench-{time.time_ns()}", "*")
    headers = {"Authorization": f"Bearer {token}"}
    writers = max(1, rows // POSTS_PER_AUTHOR)
    kinds = {
        "to-one  filter[author.name]": lambda n: f"filter[author.name]=author-{n % writers + 1}",
        "to-one  + count=none": lambda n: f"filter[author.name]=author-{n % writers + 1}&count=none",
        "to-many filter[tags.slug]": lambda n: f"filter[tags.slug]=tag-{n % TAGS + 1}",
        "to-many + count=none": lambda n: f"filter[tags.slug]=tag-{n % TAGS + 1}&count=none",
    }
    transport = httpx.ASGITransport(app=api)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        print(f"{'request':<30} {'p50 ms':>8} {'p95 ms':>8}")
        for label, query in kinds.items():
            times = []
            for n in range(requests):
                began = time.perf_counter()
                answer = await client.get(f"/objects/posts?{query(n * 7)}&limit=20", headers=headers)
                times.append((time.perf_counter() - began) * 1000)
                assert answer.status_code == 200, answer.text
            times = times[requests // 10 :]  # the first tenth warms the caches and compiles the shapes
            p95 = statistics.quantiles(times, n=20)[-1]
            print(f"{label:<30} {statistics.median(times):>8.2f} {p95:>8.2f}", flush=True)
    await api.shutdown()
    await database.disconnect()


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench.relation_filters", description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=100)
    options = parser.parse_args()
    url = database_url(options.database, options.rows)
    asyncio.run(build(options.database, url, options.rows))
    print(f"{options.database}, {options.rows:,} posts, {options.requests} requests each, one client")
    asyncio.run(measure(url, options.rows, options.requests))


if __name__ == "__main__":
    main()
