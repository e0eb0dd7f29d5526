"""The smallest real host for tests that need server processes: the API behind CORSMiddleware.

Configured from the environment, so several uvicorn processes can share one database and Redis:
PB_TEST_SERVER_DATABASE (a `databases` URL, library installed), PB_TEST_SERVER_REDIS (optional),
PB_TEST_SERVER_PREFIX (the Redis key prefix of the test). `GET /ready` is the host's own page, so
waiting for a server does not spend the rate limit.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from databases import Database
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import ApiRegistry, CORSMiddleware, HeadlessAPI
from pb_headless.ratelimit.redis import RedisRateLimiter

database = Database(os.environ["PB_TEST_SERVER_DATABASE"])
redis_url = os.environ.get("PB_TEST_SERVER_REDIS")
limiter = RedisRateLimiter(redis_url, prefix=os.environ["PB_TEST_SERVER_PREFIX"]) if redis_url else None
api = HeadlessAPI(database, ApiRegistry(), rate_limiter=limiter)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    await database.connect()
    await api.startup()
    yield
    if limiter is not None:
        await limiter.aclose()
    await database.disconnect()


async def ready(request: Request) -> PlainTextResponse:
    return PlainTextResponse(f"ready {os.getpid()}")


app = CORSMiddleware(
    Starlette(routes=[Route("/ready", ready), Mount("/api/pb/v1", app=api)], lifespan=lifespan), api=api
)
