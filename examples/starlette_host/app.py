"""The bookshop as a plain Starlette application: its own pages, the API mounted at /api/pb/v1.

Run it with `uvicorn examples.starlette_host.app:app` or `python -m examples.starlette_host`.
"""

from __future__ import annotations

import csv
import html
import io
import os
from contextlib import asynccontextmanager
from pathlib import Path

import sqlalchemy as sa
from databases import Database
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from examples.starlette_host import routes
from examples.starlette_host.models import books, prepare
from pb_headless import ApiAuth, ApiRegistry, CORSMiddleware, HeadlessAPI, install

HERE = Path(__file__).resolve().parent


def database_url() -> str:
    return os.environ.get("PB_DATABASE_URL") or f"sqlite:///{HERE / 'bookshop.db'}"


async def home(request: Request) -> HTMLResponse:
    """The shop's own page: server-rendered, no token, untouched by the API."""
    database: Database = request.app.state.database
    rows = await database.fetch_all(sa.select(books.c.title).where(books.c.published.is_(True)))
    items = "".join(f"<li>{html.escape(row.title)}</li>" for row in rows)
    return HTMLResponse(f"<!doctype html><title>Bookshop</title><h1>Bookshop</h1><ul>{items}</ul>")


@ApiAuth("books.read")
async def books_csv(request: Request) -> PlainTextResponse:
    """A host route outside the API, protected by the same guard as the API's own routes."""
    database: Database = request.app.state.database
    rows = await database.fetch_all(sa.select(books.c.title, books.c.year).where(books.c.published.is_(True)))
    out = io.StringIO()
    csv.writer(out).writerows([("title", "year"), *((row.title, row.year) for row in rows)])
    return PlainTextResponse(out.getvalue(), media_type="text/csv")


def create_app(url: str | None = None) -> ASGIApp:
    database = Database(url or database_url())
    registry = ApiRegistry().load_file(HERE / "api.py")
    api = HeadlessAPI(database, registry, routes=[routes])

    @asynccontextmanager
    async def lifespan(app: Starlette):
        await database.connect()
        await install(database)
        await prepare(database)
        await api.startup()  # a broken declaration stops the start here, not on a request
        yield
        await api.shutdown()
        await database.disconnect()

    site = Starlette(
        routes=[Route("/", home), Route("/reports/books.csv", books_csv), Mount("/api/pb/v1", app=api)],
        lifespan=lifespan,
    )
    site.state.database = database
    # Wrapping the whole site lets the middleware answer preflights before the site's routing.
    return CORSMiddleware(site, api=api)


app = create_app()
