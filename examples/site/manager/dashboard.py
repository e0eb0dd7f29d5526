"""The administration home: where the API tokens, the constructor, CORS settings and the docs are."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from examples.site.manager.signin import HOME_URL, SignIn, redirect
from examples.site.rendering import Templates
from pb_headless import HeadlessAPI


class Dashboard:
    def __init__(self, api: HeadlessAPI, signin: SignIn, templates: Templates) -> None:
        self.api = api
        self.signin = signin
        self.templates = templates

    def routes(self) -> list[Route]:
        return [
            Route("/mgr", self.to_home, methods=["GET"]),
            Route("/mgr/", self.signin.page(self.home), methods=["GET"]),
        ]

    async def to_home(self, request: Request) -> Response:
        return redirect(HOME_URL)

    async def home(self, request: Request) -> Response:
        snapshot = await self.api.snapshot()
        tokens = await self.api.tokens.list()
        return self.templates.page(
            request,
            "mgr/dashboard.html",
            {
                "objects": sorted(snapshot.catalog),
                "tokens": len(tokens),
                "live_tokens": sum(1 for token in tokens if token.is_live()),
                "dormant": snapshot.is_dormant(),
                "api_prefix": self.api.prefix,
            },
        )
