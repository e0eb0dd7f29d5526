"""One site instance as a real process, for the kill -9 test: the demo objects served from
PB_TEST_SERVER_DATABASE, with the webhook worker on and quick timings (a lease of 2 s, so a try cut
short by a kill is made again soon after the restart)."""

from __future__ import annotations

import os

from databases import Database
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import HeadlessAPI
from pb_headless.webhooks.options import WebhookOptions
from tests.support.demo import demo_registry
from tests.support.lifespan import api_lifespan

database = Database(os.environ["PB_TEST_SERVER_DATABASE"])
options = WebhookOptions(retry_delays=(0.2,) * 20, poll_interval=0.05, try_timeout=1, lease=2, batch=5)
api = HeadlessAPI(database, demo_registry(), webhooks=options)


lifespan = api_lifespan(database, api)


async def ready(request: Request) -> PlainTextResponse:
    return PlainTextResponse(f"ready {os.getpid()}")


app = Starlette(routes=[Route("/ready", ready), Mount("/api/pb/v1", app=api)], lifespan=lifespan)
