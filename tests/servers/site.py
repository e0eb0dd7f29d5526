"""A host with pages of its own around the API, for the paths CORS must cover or leave alone.

`/api/site/news` lies under the default `service_cors_paths` (`api/*`), `/blog` outside it, and
`/mgr/pb/docs` stands for the administration area, which never gets CORS. Each page serves GET only,
so an OPTIONS the middleware leaves to the host gets Starlette's own 405.
"""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import CORSMiddleware, HeadlessAPI
from tests.support.host import BASE_URL

HOST_PAGES = ("/api/site/news", "/blog", "/mgr/pb/docs")


async def page(request: Request) -> PlainTextResponse:
    return PlainTextResponse(f"the host's page {request.url.path}", headers={"Vary": "Accept-Encoding"})


def site_client(api: HeadlessAPI, address: str = "203.0.113.7") -> httpx.AsyncClient:
    """A client of a host that mounts `api` next to its own pages and wraps itself in CORSMiddleware."""
    routes = [Route(path, page, methods=["GET"]) for path in HOST_PAGES]
    site = Starlette(routes=[*routes, Mount("/api/pb/v1", app=api)])
    transport = httpx.ASGITransport(app=CORSMiddleware(site, api=api), client=(address, 50000))
    return httpx.AsyncClient(transport=transport, base_url=BASE_URL)
