"""A uvicorn process serving the demo objects on PB_TEST_SERVER_DATABASE (demo tables created, library
installed), for the change stream's tests that need a server of their own: the process must exit on
SIGTERM with a stream open; a client that stops reading is cut off after PB_TEST_STREAM_SEND_TIMEOUT
seconds (the library's 30 s otherwise), which `/streams` (the streams open now) lets a test see;
PB_TEST_RATE_LIMIT raises the rate limit for a test that sends many requests from one address."""

from __future__ import annotations

import os

from databases import Database
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import HeadlessAPI
from pb_headless.api import event_stream
from tests.support.demo import demo_registry
from tests.support.lifespan import api_lifespan

database = Database(os.environ["PB_TEST_SERVER_DATABASE"])
api = HeadlessAPI(database, demo_registry(), rate_limit=int(os.environ.get("PB_TEST_RATE_LIMIT", "120")))
event_stream.SEND_TIMEOUT = float(os.environ.get("PB_TEST_STREAM_SEND_TIMEOUT", event_stream.SEND_TIMEOUT))


lifespan = api_lifespan(database, api)


async def ready(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ready")


async def streams(request: Request) -> PlainTextResponse:
    return PlainTextResponse(str(api.streams.open_streams))


app = Starlette(
    routes=[Route("/ready", ready), Route("/streams", streams), Mount("/api/pb/v1", app=api)],
    lifespan=lifespan,
)
