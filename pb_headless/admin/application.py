"""`AdminApp`: the server-rendered pages pb_headless adds to a host's administration area (`/mgr/pb`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from pb_headless.admin.access import Access, CurrentAdmin
from pb_headless.admin.api_tabs import ApiTabSection
from pb_headless.admin.cors_settings import CorsSettingsPage
from pb_headless.admin.docs import docs_routes
from pb_headless.admin.reach import GrantScope
from pb_headless.admin.rendering import PAGE_HEADERS, Layout, Renderer
from pb_headless.admin.token_section import ListUsers, TokenSection
from pb_headless.admin.webhook_section import WebhookSection
from pb_headless.constructor.source import TableLoader

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

STATIC = Path(__file__).parent / "static"


class AdminApp:
    """An ASGI app the host mounts at `/mgr/pb`, next to its own administration pages.

    - `api`: the host's `HeadlessAPI` (its database, token store, settings store, user loader).
    - `current_admin`: the host's guard, `(request) -> admin user | None`, sync or async. It reads
      the host's own session; the admin app never signs anyone in.
    - `login_url`: where a request without an admin goes (`?next=` is added); None answers 401.
    - `constructor_tables`: the host's `load_tables(database)`, the one it gives `ConstructorSource`;
      without it there is no "Tables" section.
    - `list_users`: `() -> [(id, label)]` of users a token may act as, for a select box; without it the
      acting user is typed as an id. Either way an id the host's `user_loader` refuses is not saved.
    - `viewer_url`: passed on to the documentation page (the Swagger UI files' base address).
    - `local_viewer`: None (default) serves Swagger UI's files from the site when the `viewer` extra is
      installed and no `viewer_url` is given, else they come from a CDN; True requires the extra;
      False always uses the CDN (admin/viewer.py).
    - `home_url`: the host's administration home, linked from every page of the library's own layout.
    - `layout`: the host's layout template (`Layout(loader, template)`); every page here, the docs
      page included, extends it, so the whole administration area has one shell (docs/admin.md).
    - `new_table_url`: where the host makes a constructor table; the empty Tables page links to it.

    The host must run Starlette's `SessionMiddleware`: the CSRF token lives in its session.
    """

    def __init__(
        self,
        api: HeadlessAPI,
        *,
        current_admin: CurrentAdmin,
        login_url: str | None = None,
        constructor_tables: TableLoader | None = None,
        list_users: ListUsers | None = None,
        viewer_url: str | None = None,
        home_url: str | None = None,
        layout: Layout | None = None,
        new_table_url: str | None = None,
        local_viewer: bool | None = None,
    ) -> None:
        self.api = api
        sections = [("tokens", "API tokens"), ("webhooks", "Webhooks"), ("settings/cors", "CORS")]
        if constructor_tables is not None:
            sections.append(("tables", "Tables"))
        self.renderer = Renderer(sections, home_url, layout, new_table_url=new_table_url)
        self.access = Access(current_admin, login_url, self.renderer)
        guard = self.access.page
        routes: list[BaseRoute] = [Route("/", guard(self.index), methods=["GET"])]
        routes += TokenSection(api, self.renderer, list_users).routes(guard)
        routes += GrantScope(api).routes(guard)
        routes += WebhookSection(api, self.renderer).routes(guard)
        routes += CorsSettingsPage(api, self.renderer).routes(guard)
        if constructor_tables is not None:
            routes += ApiTabSection(api, self.renderer, constructor_tables).routes(guard)
        routes += docs_routes(api, current_admin, login_url, viewer_url, self.renderer, local_viewer)
        routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
        self.app = Starlette(routes=routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    async def index(self, request: Request) -> Response:
        return RedirectResponse(
            request.scope.get("root_path", "").rstrip("/") + "/tokens", status_code=303, headers=PAGE_HEADERS
        )
