"""A uvicorn process serving the demo objects on PB_TEST_SERVER_DATABASE (demo tables created, library
installed), for the change stream's shutdown test: the process must exit on SIGTERM with a stream open."""

from __future__ import annotations

import os

from databases import Database
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import HeadlessAPI
from tests.support.demo import demo_registry
from tests.support.lifespan import api_lifespan

database = Database(os.environ["PB_TEST_SERVER_DATABASE"])
api = HeadlessAPI(database, demo_registry())


lifespan = api_lifespan(database, api)


async def ready(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ready")


app = Starlette(routes=[Route("/ready", ready), Mount("/api/pb/v1", app=api)], lifespan=lifespan)
