"""The benchmark's host: a content site that mounts the API at /api/pb/v1, as a production host would.

It publishes the constructor table `articles` through its API tab (see bench/dataset.py) and nothing
else. The rate limit is raised out of the way: wrk sends every request from one address, and the
benchmark measures serving, not refusing.

    PB_BENCH_URL=sqlite:////tmp/pb-bench/sqlite-100000/pb.db uvicorn bench.host:app --workers 2

With `PB_BENCH_CHANGE_LOG=0` the API runs without its change log (`change_log=False`: no trigger is
installed; bench/writers.py serves a database that never had one).

With `PB_BENCH_KEEP_SESSION=1` on PostgreSQL, asyncpg's pool gives connections back without resetting
their session (docs/deployment.md, "PostgreSQL: one round trip less per request"); bench/pool_reset.py
compares the two.
"""

from __future__ import annotations

import gc
import os
from contextlib import asynccontextmanager
from typing import Any

from databases import Database
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from bench.dataset import ARTICLES
from pb_headless import ApiRegistry, CORSMiddleware, HeadlessAPI
from pb_headless.constructor import ConstructorSource

RATE_LIMIT = 1_000_000_000


async def keep_session(connection: Any) -> None:
    """asyncpg's `reset`: give the connection back as it is (docs/deployment.md)."""


async def load_tables(_: Database) -> list:
    return [ARTICLES]


def create_app(url: str, **options: Any) -> CORSMiddleware:
    """`options` go to `HeadlessAPI` (bench/fixed_cost.py turns the webhook worker off when it
    counts instructions, so that its polling does not land among a request's)."""
    keep = os.environ.get("PB_BENCH_KEEP_SESSION") == "1" and url.startswith("postgresql")
    database = Database(url, reset=keep_session) if keep else Database(url)
    registry = ApiRegistry()
    registry.add_source(ConstructorSource(load_tables))
    api = HeadlessAPI(database, registry, rate_limit=RATE_LIMIT, **options)

    @asynccontextmanager
    async def lifespan(_: Starlette):
        await database.connect()
        await api.startup()
        # What the start made (modules, the compiled catalog, the app) stays for the process's life:
        # frozen, no full collection walks it again (docs/performance.md, "Tails"). A host's choice,
        # made here as a production host would make it, in each worker.
        gc.collect()
        gc.freeze()
        yield
        await api.shutdown()
        await database.disconnect()

    async def home(_):
        return PlainTextResponse("bench host")

    site = Starlette(routes=[Route("/", home), Mount("/api/pb/v1", app=api)], lifespan=lifespan)
    return CORSMiddleware(site, api=api)


app = create_app(
    os.environ.get("PB_BENCH_URL", "sqlite:////tmp/pb-bench/sqlite-100000/pb.db"),
    **({"change_log": False} if os.environ.get("PB_BENCH_CHANGE_LOG") == "0" else {}),
)
