"""A host application built with the public API only, as a site would build it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
from databases import Database
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from pb_headless import ApiRegistry, CORSMiddleware, HeadlessAPI, SettingsStore, TokenStore

BASE_URL = "http://testserver"


async def home(request) -> PlainTextResponse:
    return PlainTextResponse("the host's own home page")


@dataclass
class Host:
    database: Database
    api: HeadlessAPI
    app: Any
    client: httpx.AsyncClient
    tokens: TokenStore
    settings: SettingsStore
    plain_tokens: dict[str, str] = field(default_factory=dict)

    async def token(self, scopes: str = "*", name: str | None = None, **options: Any) -> str:
        """Create a token and return its plain value."""
        name = name or f"token-{len(self.plain_tokens) + 1}"
        _, plain = await self.tokens.create(name, scopes, **options)
        self.plain_tokens[name] = plain
        return plain

    @staticmethod
    def auth(plain: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {plain}"}


async def build_host(database: Database, registry: ApiRegistry | None = None, **options: Any) -> Host:
    registry = registry or ApiRegistry()
    # The webhook worker polls the database in the background once started; tests that count
    # statements must not see it, so it runs only where a test asks for it (tests/webhooks).
    options.setdefault("webhooks", False)
    api = HeadlessAPI(database, registry, **options)
    site = Starlette(routes=[Route("/", home), Mount("/api/pb/v1", app=api)])
    app = CORSMiddleware(site, api=api)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 50000))
    client = httpx.AsyncClient(transport=transport, base_url=BASE_URL)
    return Host(database, api, app, client, TokenStore(database), SettingsStore(database))
