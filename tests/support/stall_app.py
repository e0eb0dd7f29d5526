"""The demo site as a real uvicorn process over a private PostgreSQL, for the stall tests.

PB_TEST_SERVER_DATABASE is the `databases` URL (demo tables created, library installed);
PB_TEST_DATABASE_TIMEOUT the database time limit in seconds.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from databases import Database
from starlette.applications import Starlette
from starlette.routing import Mount

from pb_headless import CORSMiddleware, HeadlessAPI
from tests.support.demo import demo_registry

database = Database(os.environ["PB_TEST_SERVER_DATABASE"])
api = HeadlessAPI(
    database, demo_registry(), database_timeout=float(os.environ.get("PB_TEST_DATABASE_TIMEOUT", "5"))
)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    await database.connect()
    await api.startup()
    yield
    await api.shutdown()
    await database.disconnect()


app = CORSMiddleware(Starlette(routes=[Mount("/api/pb/v1", app=api)], lifespan=lifespan), api=api)
