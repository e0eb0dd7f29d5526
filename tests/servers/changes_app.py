"""A uvicorn process serving the demo objects on PB_TEST_SERVER_DATABASE (demo tables created, library
installed), for the change stream's shutdown test: the process must exit on SIGTERM with a stream open."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from databases import Database
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import HeadlessAPI
from tests.support.demo import demo_registry

database = Database(os.environ["PB_TEST_SERVER_DATABASE"])
api = HeadlessAPI(database, demo_registry())


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    await database.connect()
    await api.startup()
    yield
    await api.shutdown()
    await database.disconnect()


async def ready(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ready")


app = Starlette(routes=[Route("/ready", ready), Mount("/api/pb/v1", app=api)], lifespan=lifespan)
