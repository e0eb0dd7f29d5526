"""A running example site for tests: its ASGI app on a real database, and a browser-like client for /mgr."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from examples.site.app import Site, create_site
from examples.site.commands import init
from examples.site.config import EXAMPLE_DIR, SiteConfig
from examples.site.users import UserStore

BASE_URL = "http://testserver"
PASSWORD = "correct horse battery"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
TOKEN_VALUE = re.compile(r'id="token-value">(pb_[0-9A-Za-z]+)<')


def token_value(page: httpx.Response) -> str:
    found = TOKEN_VALUE.search(page.text)
    assert found, f"no token value on the page ({page.status_code})"
    return found.group(1)


@dataclass
class Browser:
    """A client that keeps the session cookie and sends the CSRF token as a browser with the form does."""

    client: httpx.AsyncClient
    site: Site
    admin_id: str = ""
    tokens: dict[str, str] = field(default_factory=dict)

    async def get(self, path: str, **options: Any) -> httpx.Response:
        return await self.client.get(path, **options)

    async def csrf(self, page: str = "/mgr/login") -> str:
        answer = await self.client.get(page)
        found = CSRF_FIELD.search(answer.text)
        assert found, f"no CSRF token on {page} ({answer.status_code})"
        return found.group(1)

    async def login(self, username: str = "admin", password: str = PASSWORD) -> httpx.Response:
        data = {"username": username, "password": password, "csrf_token": await self.csrf("/mgr/login")}
        return await self.client.post("/mgr/login", data=data)

    async def submit(
        self, path: str, data: Mapping[str, Any], *, form_page: str = "/mgr/pb/tokens"
    ) -> httpx.Response:
        """POST a form (a list value repeats its key) with the CSRF token read from `form_page`, as the
        page's own form would."""
        return await self.client.post(path, data={**data, "csrf_token": await self.csrf(form_page)})

    async def create_token(self, name: str, scopes: str, **fields: str) -> str:
        page = await self.revealed(
            await self.submit("/mgr/pb/tokens", {"name": name, "scopes": scopes, **fields})
        )
        self.tokens[name] = token_value(page)
        return self.tokens[name]

    async def revealed(self, answer: httpx.Response) -> httpx.Response:
        """Create and Reissue answer 303 to the one-time reveal page: follow it, as a browser does."""
        assert answer.status_code == 303, answer.text
        assert "/tokens/reveal?" in answer.headers["location"]
        page = await self.client.get(answer.headers["location"])
        assert page.status_code == 200, page.text
        return page

    async def api(self, path: str, token: str, method: str = "GET", **options: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}", **options.pop("headers", {})}
        return await self.client.request(method, f"/api/pb/v1{path}", headers=headers, **options)


def site_config(database_url: str, **options: Any) -> SiteConfig:
    return SiteConfig(site_dir=options.pop("site_dir", EXAMPLE_DIR), database_url=database_url, **options)


@contextlib.asynccontextmanager
async def open_site(database_url: str, *, logged_in: bool = True, **options: Any) -> AsyncIterator[Browser]:
    """`init` the site on the database, add the user `admin`, start the site, give a (signed-in) browser."""
    config = site_config(database_url, **options)
    await init(config)
    site = create_site(config)
    async with site.running():
        users = UserStore(site.database)
        admin = await users.find("admin") or await users.create("admin", PASSWORD)
        transport = httpx.ASGITransport(app=site.app, client=("203.0.113.9", 50000))
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            browser = Browser(client, site, admin["id"])
            if logged_in:
                answer = await browser.login()
                assert answer.status_code == 303, answer.text
            yield browser


def copy_site_folder(target: Path) -> Path:
    """A site folder of its own (PB_SITE_DIR) with the example's core/App files."""
    import shutil

    shutil.copytree(EXAMPLE_DIR / "core", target / "core", ignore=shutil.ignore_patterns("__pycache__"))
    return target
