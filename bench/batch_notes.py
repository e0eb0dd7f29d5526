"""The notes table the batch benchmarks write, published with create, and a host that serves it.

bench/batch.py (in process) and bench/batch_http.py (under uvicorn, against PocketBase) both use it:
`prepared` installs the library and makes the table afresh, `served` is uvicorn's `--factory`.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import sqlalchemy as sa
from databases import Database
from sqlalchemy.schema import CreateTable, DropTable
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import ApiRegistry, HeadlessAPI, TokenStore, install
from pb_headless.database.dialect import dialect_of

notes = sa.Table(
    "bench_batch_notes",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.Text, nullable=True),
    sa.Column("published", sa.Boolean, nullable=False, default=True),
)
DECLARATION = {
    "model": notes,
    "fields": ["title", "body"],
    "operations": ["list", "show", "create"],
    "writable": ["title", "body"],
    "rules": {"title": "required|string|max:200", "body": "nullable|string"},
}


async def prepared(url: str) -> str:
    """The library installed and the notes table made afresh in `url`; a token that may create notes."""
    database = Database(url)
    await database.connect()
    try:
        await install(database)
        dialect = dialect_of(database)
        with warnings.catch_warnings():  # MariaDB warns that the table to drop is not there
            warnings.simplefilter("ignore")
            await database.execute(str(DropTable(notes, if_exists=True).compile(dialect=dialect)))
        await database.execute(str(CreateTable(notes).compile(dialect=dialect)))
        _, plain = await TokenStore(database).create(f"bench-batch-{time.time_ns()}", "notes.write")
    finally:
        await database.disconnect()
    return plain


def notes_api(database: Database) -> HeadlessAPI:
    registry = ApiRegistry()
    registry.register("notes", DECLARATION)
    return HeadlessAPI(database, registry, rate_limit=1_000_000_000, webhooks=False)


def served() -> Starlette:
    """The API on `PB_BENCH_BATCH_URL`, mounted as a host mounts it (uvicorn's `--factory`)."""
    database = Database(os.environ["PB_BENCH_BATCH_URL"])
    api = notes_api(database)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await database.connect()
        await api.startup()
        yield
        await api.shutdown()
        await database.disconnect()

    async def home(_: Request) -> PlainTextResponse:
        return PlainTextResponse("bench batch host")

    return Starlette(routes=[Route("/", home), Mount("/api/pb/v1", app=api)], lifespan=lifespan)
