"""Serving this site folder: its declaration file, its custom routes and the satellite components.

From the site folder (so that `core` imports): `uvicorn host:app`. A satellite installed with pip is
found through its entry point; one that is not installed can be named by module in `components`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from core.App.models import metadata
from databases import Database
from sqlalchemy.schema import CreateTable
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import ApiRegistry, CORSMiddleware, HeadlessAPI, install

SITE = Path(__file__).resolve().parent


async def home(request):
    return PlainTextResponse("The shop's own home page.")


def create_app(
    database_url: str | None = None,
    *,
    components: Iterable[str] = (),
    user_loader: Callable[[str], Any] | None = None,
) -> CORSMiddleware:
    database = Database(database_url or os.environ.get("PB_DATABASE_URL") or f"sqlite:///{SITE / 'shop.db'}")
    registry = ApiRegistry().load_file(SITE / "core" / "App" / "api.py")
    registry.load_components(components)
    routes = [SITE / "core" / "App" / "routes.py"]
    api = HeadlessAPI(database, registry, routes=routes, user_loader=user_loader)

    @asynccontextmanager
    async def lifespan(app):
        await database.connect()
        await install(database)
        for table in metadata.sorted_tables:
            await database.execute(CreateTable(table, if_not_exists=True))
        await api.startup()
        yield
        await api.shutdown()
        await database.disconnect()

    site = Starlette(routes=[Route("/", home), Mount("/api/pb/v1", app=api)], lifespan=lifespan)
    return CORSMiddleware(site, api=api)


app = create_app()
