"""The demo host as an importable ASGI app for real servers: `tests.support.demo_app:app`.

Configured by PB_DATABASE_URL (and optionally PB_REDIS_URL); the database must already hold the
library's tables and the demo schema.
"""

from __future__ import annotations

import os

from databases import Database
from starlette.applications import Starlette
from starlette.routing import Mount

from pb_headless import CORSMiddleware, HeadlessAPI
from tests.support.demo import demo_registry
from tests.support.lifespan import api_lifespan

database = Database(os.environ["PB_DATABASE_URL"])
api = HeadlessAPI(
    database,
    demo_registry(),
    redis_url=os.environ.get("PB_REDIS_URL") or None,
    rate_limit=int(os.environ.get("PB_RATE_LIMIT", "120")),
)


lifespan = api_lifespan(database, api)


app = CORSMiddleware(Starlette(routes=[Mount("/api/pb/v1", app=api)], lifespan=lifespan), api=api)
