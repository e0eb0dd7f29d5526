"""The recipe site as a bare ASGI callable: no framework routes its requests, it does so by hand.

Run it with `uvicorn examples.raw_asgi_host.app:app` or `python -m examples.raw_asgi_host`.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import sqlalchemy as sa
from databases import Database
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from examples.raw_asgi_host import routes
from examples.raw_asgi_host.models import prepare, recipes
from pb_headless import ApiAuth, ApiRegistry, CORSMiddleware, HeadlessAPI, install

HERE = Path(__file__).resolve().parent
API_PREFIX = "/api/pb/v1"


def database_url() -> str:
    return os.environ.get("PB_DATABASE_URL") or f"sqlite:///{HERE / 'recipes.db'}"


class RecipeSite:
    """The whole site: a lifespan, its own pages, and every path under /api/pb/v1 handed to the API."""

    def __init__(self, url: str | None = None) -> None:
        self.database = Database(url or database_url())
        registry = ApiRegistry().load_file(HERE / "api.py")
        self.api = HeadlessAPI(self.database, registry, routes=[routes])
        # The same guard as the API's own routes, on an endpoint of the site itself.
        self.favourites = ApiAuth("recipes.read")(self._favourites)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope["path"]
        if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
            await self.api(scope, receive, send)  # the API strips its own prefix
            return
        if path == "/":
            await self._send_html(send, 200, await self._home())
        elif path == "/reports/favourites":
            response = await self.favourites(Request(scope, receive))
            await response(scope, receive, send)
        else:
            await self._send_html(send, 404, "<!doctype html><title>Not found</title><h1>Not found</h1>")

    async def _home(self) -> str:
        rows = await self.database.fetch_all(sa.select(recipes.c.title).where(recipes.c.published.is_(True)))
        items = "".join(f"<li>{html.escape(row.title)}</li>" for row in rows)
        return f"<!doctype html><title>Recipes</title><h1>Recipes</h1><ul>{items}</ul>"

    async def _favourites(self, request: Request) -> Response:
        query = sa.select(recipes.c.title).where(recipes.c.published.is_(True))
        rows = await self.database.fetch_all(query.where(recipes.c.vegetarian.is_(True)))
        return JSONResponse({"favourites": [row.title for row in rows], "token": request.state.token.name})

    @staticmethod
    async def _send_html(send: Send, status: int, page: str) -> None:
        body = page.encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.database.connect()
                    await install(self.database)
                    await prepare(self.database)
                    await self.api.startup()
                except Exception as error:
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.api.shutdown()
                await self.database.disconnect()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(url: str | None = None) -> CORSMiddleware:
    site = RecipeSite(url)
    # The middleware marks each request with the API, which is how the guard on /reports finds it.
    return CORSMiddleware(site, api=site.api)


app = create_app()
