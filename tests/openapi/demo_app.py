"""The demo host served by a real uvicorn process for schemathesis: every kind of field and operation.

Configured from the environment: PB_OPENAPI_DATABASE, a `databases` URL whose library tables and demo
rows already exist. The rate limit is lifted so the fuzzer's requests are not all answered 429.
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

from pb_headless import CORSMiddleware, HeadlessAPI, route
from tests.support.demo import demo_registry


@route("GET", "/reports/summary", guard="ApiAuth:reports.read")
async def report_summary(request: Request) -> dict[str, object]:
    """Counts of published articles per category."""
    return {"data": {"categories": 3}}


@route("GET", "/reports/{year:int}", guard="ApiAuth")
async def report_of_year(request: Request) -> dict[str, object]:
    """The report of one year."""
    return {"data": {"year": str(request.path_params["year"])}}  # any digits match `int`: keep it JSON-safe


def build_app(database: Database) -> tuple[CORSMiddleware, HeadlessAPI]:
    api = HeadlessAPI(database, demo_registry(), rate_limit=10**9, routes=[report_summary, report_of_year])

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await database.connect()
        await api.startup()
        yield
        await database.disconnect()

    async def ready(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ready")

    site = Starlette(routes=[Route("/ready", ready), Mount("/api/pb/v1", app=api)], lifespan=lifespan)
    return CORSMiddleware(site, api=api), api


if "PB_OPENAPI_DATABASE" in os.environ:
    app, api = build_app(Database(os.environ["PB_OPENAPI_DATABASE"]))
