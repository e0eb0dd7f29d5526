"""A database of a benchmark run's own: a fresh SQLite file, or a database made on the tests'
PostgreSQL or MariaDB server for the run and dropped after it."""

from __future__ import annotations

import contextlib
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from databases import Database

SERVERS = {
    "postgresql": "postgresql://postgres@127.0.0.1:5432/test",
    "mariadb": "mysql://root@127.0.0.1:3306/test",
}


@contextlib.asynccontextmanager
async def private_database(kind: str) -> AsyncIterator[str]:
    """The URL of an empty database of `kind` (`sqlite`, `postgresql`, `mariadb`) for the block."""
    if kind == "sqlite":
        yield f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
        return
    private = f"pbbench_{uuid.uuid4().hex[:8]}"
    async with Database(SERVERS[kind]) as server:
        await server.execute(f"CREATE DATABASE {private}")
    try:
        yield SERVERS[kind].rsplit("/", 1)[0] + "/" + private
    finally:
        async with Database(SERVERS[kind]) as server:
            await server.execute(f"DROP DATABASE {private}")
