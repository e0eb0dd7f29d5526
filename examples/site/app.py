"""The host: a Starlette site with the API at /api/pb/v1, public pages, and its administration area at /mgr/.

request → CORSMiddleware (OPTIONS under the API, CORS headers)
        → AdminSessions (signed-cookie sessions under /mgr only)
        → Starlette routes: public pages, /mgr pages, /mgr/pb (pb_headless.admin), /api/pb/v1
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from databases import Database
from jinja2 import FileSystemLoader
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from examples.site.config import SiteConfig
from examples.site.definitions import load_tables
from examples.site.draining import Draining
from examples.site.installation import is_initialised, session_secret
from examples.site.manager.constructor import ConstructorPages
from examples.site.manager.dashboard import Dashboard
from examples.site.manager.signin import HOME_URL, LOGIN_URL, SignIn
from examples.site.pages import PublicPages
from examples.site.passwords import stand_in_hash
from examples.site.rendering import TEMPLATES, Templates
from examples.site.schema import create_tables, metadata
from examples.site.sessions import AdminSessions
from examples.site.site_folder import SiteFolder
from examples.site.users import UserStore
from pb_headless import ApiRegistry, CORSMiddleware, HeadlessAPI
from pb_headless.admin import AdminApp, Layout
from pb_headless.constructor import ConstructorSource

STATIC = Path(__file__).parent / "static"


class SiteNotReady(RuntimeError):
    """The database lacks the site's tables; `init` makes them."""


@dataclass
class Site:
    """One running site: its configuration, database, registry, API and the ASGI app to serve."""

    config: SiteConfig
    folder: SiteFolder
    database: Database
    registry: ApiRegistry
    api: HeadlessAPI
    users: UserStore
    sessions: AdminSessions
    app: Any  # the ASGI app: CORSMiddleware around everything (inside `Draining` with PB_DRAIN_SECONDS)

    async def startup(self) -> None:
        """Connect, check the site is initialised, learn the session key, compile the registry once
        (a broken declaration stops the start here, with its message)."""
        await self.database.connect()
        try:
            if not await is_initialised(self.database):
                raise SiteNotReady(
                    f"the database {self.config.database_label} is not initialised: "
                    "run `python -m examples.site init` first"
                )
            await create_tables(self.database, metadata)  # tables added since `init` ran (sessions, sign-ins)
            await asyncio.to_thread(stand_in_hash)  # made before the first sign-in, off the event loop
            self.sessions.configure(self.config.secret_key or await session_secret(self.database))
            await self.api.startup()
        except BaseException:
            await self.shutdown()
            raise

    async def shutdown(self) -> None:
        await self.api.shutdown()
        if self.database.is_connected:
            await self.database.disconnect()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Site]:
        await self.startup()
        try:
            yield self
        finally:
            await self.shutdown()


def create_site(config: SiteConfig) -> Site:
    """Build the site from its configuration; nothing touches the database until `startup`."""
    folder = SiteFolder(config.site_dir)
    folder.activate()
    database = Database(config.database_url)
    users = UserStore(database)
    api = build_api(config, folder, database, users)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with site.running():  # `site` is bound below, before any server starts the lifespan
            if isinstance(site.app, Draining):
                site.app.install()
            yield

    starlette = Starlette(routes=site_routes(config, folder, api, users), lifespan=lifespan)
    starlette.state.database = database  # custom routes reach the database as request.app.state.database
    starlette.state.pb_headless = api
    sessions = AdminSessions(starlette)
    app: Any = CORSMiddleware(sessions, api=api)
    if config.drain_seconds > 0:
        app = Draining(app, config.drain_seconds)
    site = Site(config, folder, database, api.registry, api, users, sessions, app)
    return site


def build_api(config: SiteConfig, folder: SiteFolder, database: Database, users: UserStore) -> HeadlessAPI:
    """The registry (constructor tables < components < the declaration file) and the API serving it."""
    registry = ApiRegistry()
    registry.add_source(ConstructorSource(load_tables))
    registry.load_components(config.components)
    registry.load_file(folder.api_file)
    return HeadlessAPI(
        database,
        registry,
        user_loader=users.active,
        redis_url=config.redis_url,
        trusted_proxies=config.trusted_proxies,
        routes=[folder.routes_file] if folder.routes_file else [],
        migrate=True,  # serve brings the library's tables of an older release up (docs/upgrading.md)
    )


def site_routes(
    config: SiteConfig, folder: SiteFolder, api: HeadlessAPI, users: UserStore
) -> list[BaseRoute]:
    templates = Templates()
    signin = SignIn(users, templates, api.client_ip)
    admin = AdminApp(
        api,
        current_admin=signin.current_admin,
        login_url=LOGIN_URL,
        constructor_tables=load_tables,
        list_users=users.choices,
        viewer_url=config.docs_viewer_url,
        home_url=HOME_URL,
        layout=Layout(FileSystemLoader(TEMPLATES), "mgr/base.html"),  # one shell for all of /mgr
        new_table_url="/mgr/constructor/new",
    )
    return [
        *PublicPages(api.database, folder, templates).routes(),
        *signin.routes(),
        *Dashboard(api, signin, templates).routes(),
        *ConstructorPages(api, signin, templates).routes(),
        Mount("/mgr/pb", app=admin),
        Mount("/api/pb/v1", app=api),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


def create_app(config: SiteConfig | None = None) -> Any:
    """The ASGI app for `uvicorn --factory examples.site.app:create_app`, configured from the environment.
    A site that cannot start is one line in uvicorn's log (examples/site/startup.py)."""
    from examples.site.startup import served

    return served(lambda: create_site(config or SiteConfig.from_environment()).app, config)
