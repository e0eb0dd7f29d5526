"""The same `articles` rows for every system: the pb_headless host, the floor server and Directus.

Rows come from the kit's generator (seed 42). The host's table is a constructor table published
through the API tab (category and published_at filterable and sortable; title, body and category
searchable), filled through SQLAlchemy; the floor and Directus keep the kit's own storage (published_at
as epoch milliseconds), so every system serves the rows exactly as its stack stores them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import shutil
import sqlite3
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from databases import Database
from sqlalchemy.ext.asyncio import create_async_engine

from bench.kit import generator
from pb_headless import TokenStore, install
from pb_headless.constructor import (
    ApiTab,
    ApiTabStore,
    ConstructorField,
    ConstructorSource,
    ConstructorTable,
    create_table,
)

SERVERS = {
    "postgresql": os.environ.get("PB_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432"),
    "mariadb": os.environ.get("PB_BENCH_MARIADB", "mysql://root@127.0.0.1:3306"),
}
ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "mariadb": "mysql+aiomysql",
}
DIRECTUS_DB = Path("/tmp/peer-directus/data/directus.db")
DIRECTUS_TOKEN = Path("/tmp/peer-directus/static.token")
CHUNK = 5000

ARTICLES = ConstructorTable(
    "articles",
    "Articles",
    (
        ConstructorField("title", "string", searchable=True, length=255),
        ConstructorField("body", "text", searchable=True),
        ConstructorField("category", "string", searchable=True, length=64),
        ConstructorField("price", "number"),
        ConstructorField("published_at", "datetime"),
    ),
)
ARTICLES_TAB = ApiTab(
    enabled=True,
    fields=tuple(field.name for field in ARTICLES.fields),
    operations=("list", "show", "create", "update", "delete"),  # the writes (bench/writes.py)
    filterable=("category", "published_at"),
    sortable=("category", "published_at"),
)


@dataclass(frozen=True)
class Expected:
    """What the answers must say, computed from the generated rows themselves."""

    rows: int
    category_c7: int
    search_lorem: int
    record_id: int


@dataclass(frozen=True)
class Prepared:
    database: str
    rows: int
    pb_url: str
    pb_token: str
    floor_url: str  # a SQLite path for the kit's floor, a server URL for the async floor
    kit_token: str  # the token Directus and the floor answer to
    directus_db: str | None
    expected: Expected

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2))


def expected_of(rows: int) -> Expected:
    c7 = lorem = 0
    for _, title, body, category, _, _ in generator().rows(rows):
        c7 += category == "c7"
        lorem += "lorem" in title.lower() or "lorem" in body.lower() or "lorem" in category.lower()
    return Expected(rows=rows, category_c7=c7, search_lorem=lorem, record_id=min(12345, rows))


def _pb_rows(start_rows: Any) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "title": title,
            "body": body,
            "category": category,
            "price": price,
            "published_at": datetime.fromtimestamp(ms / 1000, UTC).replace(tzinfo=None),
        }
        for i, title, body, category, price, ms in start_rows
    ]


CLIENTS = 16  # the searches' tokens: wrk's connections as that many clients (bench/wrk_requests.lua)


async def client_tokens(url: str, count: int = CLIENTS) -> list[str]:
    """`count` tokens like the run's own, for a request a token may have only a few of running at once
    (a search: docs/hardening.md), so that wrk's connections act as that many clients."""
    database = Database(url)
    await database.connect()
    try:
        store, run = TokenStore(database), secrets.token_hex(4)  # names are unique: one set per run
        return [(await store.create(f"bench client {run} {n}", ["articles.read"]))[1] for n in range(count)]
    finally:
        await database.disconnect()


def database_name(kind: str, rows: int, role: str) -> str:
    """`pb_bench_<role>_<rows>`, with `PB_BENCH_TAG` appended when set: two runs at once on one shared
    server (another checkout's, say) then each load and drop databases of their own."""
    tag = "".join(c for c in os.environ.get("PB_BENCH_TAG", "") if c.isalnum() or c == "_")
    return f"pb_bench_{role}_{rows}" + (f"_{tag}" if tag else "")


async def _fresh_server_database(kind: str, name: str) -> str:
    """An empty database of this name on the shared server (dropped first when it exists)."""
    server = SERVERS[kind]
    admin_url = server + ("/postgres" if kind == "postgresql" else "/mysql")
    engine = create_async_engine(
        admin_url.replace(admin_url.split("://")[0], ASYNC_DRIVERS[kind], 1), isolation_level="AUTOCOMMIT"
    )
    try:
        async with engine.connect() as connection:
            quoted = f'"{name}"' if kind == "postgresql" else f"`{name}`"
            force = " WITH (FORCE)" if kind == "postgresql" else ""
            await connection.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted}{force}"))
            await connection.execute(sa.text(f"CREATE DATABASE {quoted}"))
    finally:
        await engine.dispose()
    return f"{server}/{name}"


async def build_pb(kind: str, rows: int, work: Path, role: str = "pb") -> tuple[str, str]:
    """The host's database: library tables, the published constructor table, its rows, a read token.
    On a server the database is `pb_bench_<role>_<rows>`: another role keeps another run's apart."""
    if kind == "sqlite":
        path = work / "pb.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        url = f"sqlite:///{path}"
    else:
        url = await _fresh_server_database(kind, database_name(kind, rows, role))
    database = Database(url)
    await database.connect()
    try:
        await install(database)
        definition = await create_table(database, ARTICLES)
        await ApiTabStore(database).save(ARTICLES.name, ARTICLES_TAB)
        _, token = await TokenStore(database).create("bench", ["articles.read", "articles.write"])
    finally:
        await database.disconnect()
    await _fill(url, kind, definition, generator().rows(rows))
    await _publish(url)
    if kind == "sqlite":
        # WAL, as docs/deployment.md recommends for a busy site and as PocketBase runs its own file:
        # readers and the writer never wait on each other, and a request's reads share one snapshot
        # (docs/performance.md, "One snapshot per request in WAL mode").
        connection = sqlite3.connect(path)
        try:
            connection.execute("PRAGMA journal_mode = WAL")
        finally:
            connection.close()
    if kind == "postgresql":
        # A pool per worker smaller than asyncpg's default of 10: the server is shared.
        url += "?min_size=2&max_size=8"
    return url, token


async def _publish(url: str) -> None:
    """Publish the table once its rows are in, as a site does when it turns an API tab on: the
    indexes the publication implies (the search index among them) are made here, not while the
    server starts."""
    database = Database(url)
    await database.connect()
    try:
        await ConstructorSource(lambda _: [ARTICLES])(database)
    finally:
        await database.disconnect()


async def _fill(url: str, kind: str, table: sa.Table, source: Any) -> None:
    engine = create_async_engine(url.replace(url.split("://")[0], ASYNC_DRIVERS[kind], 1))
    try:
        batch: list[Any] = []
        for row in source:
            batch.append(row)
            if len(batch) == CHUNK:
                async with engine.begin() as connection:
                    await connection.execute(table.insert(), _pb_rows(batch))
                batch = []
        if batch:
            async with engine.begin() as connection:
                await connection.execute(table.insert(), _pb_rows(batch))
        async with engine.begin() as connection:
            if kind == "postgresql":
                # The sequence past the rows; VACUUM (ANALYZE) follows, outside a transaction.
                await connection.execute(
                    sa.text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"(SELECT max(id) FROM {table.name}))"
                    )
                )
            elif kind == "mariadb":
                await connection.execute(sa.text(f"ANALYZE TABLE {table.name}"))
            else:
                await connection.execute(sa.text("ANALYZE"))
        if kind == "postgresql":
            await _vacuum(engine, table.name)
    finally:
        await engine.dispose()


async def _vacuum(engine: Any, table: str) -> None:
    """`VACUUM (ANALYZE)`: what autovacuum does to a table some time after a bulk load. It sets the
    visibility map, without which no index-only scan skips the table (the keys of a deep page, a count),
    so a table measured right after loading would be slower than any table in service."""
    async with engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        await autocommit.execute(sa.text(f"VACUUM (ANALYZE) {table}"))


def kit_token(work: Path) -> str:
    """Directus' static token when the peer is set up; a token of our own for a floor-only run."""
    if DIRECTUS_TOKEN.is_file():
        return DIRECTUS_TOKEN.read_text().strip()
    own = work / "kit.token"
    if not own.is_file():
        own.write_text("bench-" + secrets.token_hex(24))
    return own.read_text().strip()


def build_sqlite_floor(rows: int, work: Path, token: str) -> str:
    """The kit's floor database: its generator's DDL and rows, and the token's sha256."""
    path = work / "floor.db"
    stamp = work / "floor.stamp"
    want = f"{rows}:{hashlib.sha256(token.encode()).hexdigest()}"
    if path.is_file() and stamp.is_file() and stamp.read_text() == want:
        return str(path)
    path.unlink(missing_ok=True)
    gen = generator()
    con = sqlite3.connect(path)
    con.execute(gen.DDL)
    with con:
        con.executemany("INSERT INTO articles VALUES (?,?,?,?,?,?)", gen.rows(rows))
        con.execute(
            "CREATE TABLE api_tokens (token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, "
            "status TEXT NOT NULL)"
        )
        con.execute(
            "INSERT INTO api_tokens VALUES (?, 'bench-reader', 'active')",
            (hashlib.sha256(token.encode()).hexdigest(),),
        )
    con.close()
    stamp.write_text(want)
    return str(path)


def build_directus(rows: int, work: Path) -> str | None:
    """A copy of the peer's database holding `rows` rows (the peer's own file is never changed)."""
    if not DIRECTUS_DB.is_file():
        return None
    path = work / "directus.db"
    stamp = work / "directus.stamp"
    want = f"{rows}:{DIRECTUS_DB.stat().st_mtime_ns}"
    if path.is_file() and stamp.is_file() and stamp.read_text() == want:
        return str(path)
    shutil.copyfile(DIRECTUS_DB, path)
    con = sqlite3.connect(path)
    count = con.execute("SELECT count(*) FROM articles").fetchone()[0]
    if count != rows:
        gen = generator()
        with con:
            con.execute("DELETE FROM articles")
            con.executemany(
                "INSERT INTO articles (id,title,body,category,price,published_at) VALUES (?,?,?,?,?,?)",
                gen.rows(rows),
            )
        con.execute("VACUUM")
    con.close()
    stamp.write_text(want)
    return str(path)


async def build_server_floor(kind: str, rows: int, token: str) -> str:
    """The async-driver floor's database on PostgreSQL or MariaDB: the kit's columns, no index but the
    key, which numbers new rows itself (the floor's creates, bench/writes.py)."""
    url = await _fresh_server_database(kind, database_name(kind, rows, "floor"))
    metadata = sa.MetaData()
    articles = sa.Table(
        "articles",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("title", sa.String(255)),
        sa.Column("body", sa.Text),
        sa.Column("category", sa.String(64)),
        sa.Column("price", sa.Double),
        sa.Column("published_at", sa.BigInteger),
    )
    api_tokens = sa.Table(
        "api_tokens",
        metadata,
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
    )
    engine = create_async_engine(url.replace(url.split("://")[0], ASYNC_DRIVERS[kind], 1))
    try:
        async with engine.begin() as connection:
            await connection.run_sync(metadata.create_all)
            await connection.execute(
                api_tokens.insert(),
                [
                    {
                        "token_hash": hashlib.sha256(token.encode()).hexdigest(),
                        "user_id": "bench-reader",
                        "status": "active",
                    }
                ],
            )
        keys = ("id", "title", "body", "category", "price", "published_at")
        batch: list[dict[str, Any]] = []
        for row in generator().rows(rows):
            batch.append(dict(zip(keys, row, strict=True)))
            if len(batch) == CHUNK:
                async with engine.begin() as connection:
                    await connection.execute(articles.insert(), batch)
                batch = []
        if batch:
            async with engine.begin() as connection:
                await connection.execute(articles.insert(), batch)
        if kind == "postgresql":
            async with engine.begin() as connection:
                await connection.execute(
                    sa.text(
                        "SELECT setval(pg_get_serial_sequence('articles', 'id'), "
                        + "(SELECT max(id) FROM articles))"
                    )
                )
            await _vacuum(engine, "articles")
        else:
            async with engine.begin() as connection:
                await connection.execute(sa.text("ANALYZE TABLE articles"))
    finally:
        await engine.dispose()
    return url


async def prepare(kind: str, rows: int, work: Path, with_directus: bool) -> Prepared:
    work.mkdir(parents=True, exist_ok=True)
    token = kit_token(work)
    pb_url, pb_token = await build_pb(kind, rows, work)
    if kind == "sqlite":
        floor_url = build_sqlite_floor(rows, work, token)
    else:
        floor_url = await build_server_floor(kind, rows, token)
    directus_db = build_directus(rows, work) if kind == "sqlite" and with_directus else None
    prepared = Prepared(
        kind,
        rows,
        pb_url,
        pb_token,
        floor_url,
        token,
        directus_db,
        await asyncio.to_thread(expected_of, rows),
    )
    prepared.save(work / "prepared.json")
    return prepared
