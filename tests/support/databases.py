"""Real databases for tests: a fresh SQLite file, or the local PostgreSQL/MariaDB emptied first."""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from databases import Database
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from pb_headless import install
from tests.support import installed as installed_state

DATABASE_KINDS = ("sqlite", "postgresql", "mariadb")
# The MariaDB driver: aiomysql (`mysql://`, what `databases` picks) or asyncmy (docs/hosting.md).
MARIADB_DRIVER = os.environ.get("PB_TEST_MARIADB_DRIVER", "aiomysql")
SERVERS = {
    "postgresql": os.environ.get("PB_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"),
    "mariadb": os.environ.get(
        "PB_TEST_MARIADB_URL",
        "mysql://root@127.0.0.1:3306/test"
        if MARIADB_DRIVER == "aiomysql"
        else f"mysql+{MARIADB_DRIVER}://root@127.0.0.1:3306/test",
    ),
}
# Each test session works in a database of its own, so parallel runs on one server never collide.
SESSION_DATABASE = f"pbt_{os.getpid()}_{uuid.uuid4().hex[:6]}"
URLS = {kind: url.rsplit("/", 1)[0] + "/" + SESSION_DATABASE for kind, url in SERVERS.items()}
_created: set[str] = set()
ASYNC_URLS = {
    "postgresql": ("postgresql://", "postgresql+asyncpg://"),
    "mariadb": ("mysql://", "mysql+aiomysql://"),
    "sqlite": ("sqlite://", "sqlite+aiosqlite://"),
}


def url_for(kind: str, folder: Path) -> str:
    return f"sqlite:///{folder / 'test.db'}" if kind == "sqlite" else URLS[kind]


def async_engine_url(url: str, kind: str) -> str:
    plain, driver = ASYNC_URLS[kind]
    if url.startswith(driver.split("+")[0] + "+"):  # a URL that names its driver keeps it
        return url
    return url.replace(plain, driver, 1)


def _async_url(url: str, kind: str) -> str:
    return "" if kind == "sqlite" else async_engine_url(url, kind)


def unavailable(kind: str, error: Exception) -> None:
    reason = f"{kind} is not reachable at {SERVERS.get(kind)}: {type(error).__name__}: {error}"
    if os.environ.get("PB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} (PB_REQUIRE_SERVICES=1 makes it required)")
    pytest.skip(reason)


@contextlib.asynccontextmanager
async def open_database(kind: str, folder: Path, *, installed: bool = True) -> AsyncIterator[Database]:
    """A connected database of `kind`: empty, or (`installed`) holding exactly what a fresh install leaves.

    Installing runs the migrations (DDL, slow on the servers), so a session installs once per kind and
    then brings the library's tables back to that state (tests/support/installed.py)."""
    url = url_for(kind, folder)
    try:
        # Inside the try: a missing driver (asyncpg, aiomysql) is as absent as a server that is down.
        database = Database(url)
        if kind != "sqlite":
            await _ensure_session_database(kind)
        needs_install = await installed_state.prepare(url, _async_url(url, kind), kind, installed=installed)
    except Exception as error:
        unavailable(kind, error)
    await database.connect()
    try:
        if needs_install:
            await install(database)
            await installed_state.remember(url, _async_url(url, kind), kind)
        yield database
    finally:
        await database.disconnect()


async def _ensure_session_database(kind: str) -> None:
    if kind in _created:
        return
    engine = create_async_engine(
        async_engine_url(SERVERS[kind], kind), poolclass=NullPool, isolation_level="AUTOCOMMIT"
    )
    try:
        async with engine.connect() as connection:
            extra = " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci" if kind == "mariadb" else ""
            await connection.execute(sa.text(f"CREATE DATABASE {SESSION_DATABASE}{extra}"))
    finally:
        await engine.dispose()
    _created.add(kind)


async def drop_session_databases() -> None:
    for kind in list(_created):
        engine = create_async_engine(
            async_engine_url(SERVERS[kind], kind), poolclass=NullPool, isolation_level="AUTOCOMMIT"
        )
        try:
            async with engine.connect() as connection:
                await connection.execute(sa.text(f"DROP DATABASE IF EXISTS {SESSION_DATABASE}"))
        finally:
            await engine.dispose()
        _created.discard(kind)
    installed_state.forget()


async def until_in_processlist(database: Database, condition: str, what: str) -> None:
    """MariaDB: until another connection to `database`'s own database runs a statement meeting
    `condition` (SQL on information_schema.processlist); `what` names it when it never does."""
    query = (
        "SELECT COUNT(*) FROM information_schema.processlist "
        f"WHERE db = DATABASE() AND id <> CONNECTION_ID() AND {condition}"
    )
    for _ in range(250):
        if await database.fetch_val(query):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what} never showed in the process list")
