"""The demo site as a real uvicorn process over a private PostgreSQL, for the stall tests.

PB_TEST_SERVER_DATABASE is the `databases` URL (demo tables created, library installed);
PB_TEST_DATABASE_TIMEOUT the database time limit in seconds.
"""

from __future__ import annotations

import os

from databases import Database
from starlette.applications import Starlette
from starlette.routing import Mount

from pb_headless import CORSMiddleware, HeadlessAPI
from tests.support.demo import demo_registry
from tests.support.lifespan import api_lifespan

database = Database(os.environ["PB_TEST_SERVER_DATABASE"])
api = HeadlessAPI(
    database, demo_registry(), database_timeout=float(os.environ.get("PB_TEST_DATABASE_TIMEOUT", "5"))
)


lifespan = api_lifespan(database, api)


app = CORSMiddleware(Starlette(routes=[Mount("/api/pb/v1", app=api)], lifespan=lifespan), api=api)
