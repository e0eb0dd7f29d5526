"""The API driven by Starlette's own `TestClient`, as FastAPI and Starlette hosts test their sites.

That client runs the app in a thread of its own and fills the ASGI scope its own way: `server` and
`client` are lists, not tuples (ASGI allows any pair). Every other HTTP test here uses httpx's ASGI
transport, which sends tuples, so this module is the one that would see an answer depend on it.
"""

from __future__ import annotations

import asyncio
import re
import warnings
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from databases import Database
from starlette.applications import Starlette
from starlette.routing import Mount

from examples.fastapi_host.app import create_app as fastapi_site
from examples.raw_asgi_host.app import create_app as raw_asgi_site
from examples.site.app import create_site
from examples.site.commands import init
from examples.site.config import EXAMPLE_DIR, SiteConfig
from examples.site.users import UserStore
from examples.starlette_host.app import create_app as starlette_site
from pb_headless import CORSMiddleware, HeadlessAPI, SettingsStore, TokenStore, install
from tests.support.demo import create_demo, demo_registry

with warnings.catch_warnings():  # Starlette 1.x asks for its httpx2 fork here and works on httpx as well
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

API = "/api/pb/v1"
PASSWORD = "correct horse battery"
APP = "https://app.example.com"


async def _prepared(url: str, scopes: str, *, demo: bool = False, cors: str | None = None) -> str:
    """The library's tables (and the demo's rows), then a token's plain value."""
    database = Database(url)
    await database.connect()
    try:
        await install(database)
        if demo:
            await create_demo(database)
        if cors is not None:
            await SettingsStore(database).set("service_cors_origins", cors)
        _, plain = await TokenStore(database).create("reader", scopes)
        return plain
    finally:
        await database.disconnect()


def _host(url: str):
    """The demo's declarations mounted in a Starlette site, as docs/getting-started.md shows."""
    database = Database(url)
    api = HeadlessAPI(database, demo_registry(), webhooks=False)

    @asynccontextmanager
    async def lifespan(app):
        await database.connect()
        await api.startup()
        yield
        await api.shutdown()
        await database.disconnect()

    site = Starlette(routes=[Mount(API, app=api)], lifespan=lifespan)
    return CORSMiddleware(site, api=api)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'site.db'}"


def test_reads_writes_and_service_endpoints_answer_through_starlettes_test_client(url):
    plain = asyncio.run(_prepared(url, "articles.read articles.write", demo=True, cors=APP))
    auth = {"Authorization": f"Bearer {plain}"}
    with TestClient(_host(url)) as client:
        health = client.get(f"{API}/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"

        page = client.get(f"{API}/objects/articles", headers=auth)
        assert page.status_code == 200, page.text
        assert page.json()["links"]["self"].startswith("http://testserver/api/pb/v1/objects/articles")
        first = page.json()["data"][0]["id"]

        shown = client.get(f"{API}/objects/articles/{first}", headers={**auth, "Origin": APP})
        assert shown.status_code == 200 and shown.json()["data"]["id"] == first
        assert shown.headers["access-control-allow-origin"] == APP
        revalidating = {**auth, "If-None-Match": shown.headers["etag"]}
        again = client.get(f"{API}/objects/articles/{first}", headers=revalidating)
        assert again.status_code == 304

        created = client.post(f"{API}/objects/articles", headers=auth, json={"title": "Through TestClient"})
        assert created.status_code == 201, created.text
        new = created.json()["data"]["id"]
        changed = client.patch(
            f"{API}/objects/articles/{new}",
            headers={**auth, "If-Match": created.headers["etag"]},
            json={"title": "Renamed"},
        )
        assert changed.status_code == 200 and changed.json()["data"]["title"] == "Renamed"
        assert client.delete(f"{API}/objects/articles/{new}", headers=auth).status_code == 204
        gone = client.get(f"{API}/objects/articles/{new}", headers=auth)
        assert (gone.status_code, gone.json()["error"]) == (404, "not_found")

        feed = client.get(f"{API}/changes/articles", headers=auth)
        assert feed.status_code == 200 and "next" in feed.json()["meta"]
        for path in ("/me", "/objects", "/openapi.json"):
            assert client.get(API + path, headers=auth).status_code == 200, path

        missing = client.get(f"{API}/objects/articles")
        assert (missing.status_code, missing.json()["error"]) == (401, "unauthorized")
        asked = {
            "Origin": APP,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "Authorization",
        }
        preflight = client.options(f"{API}/objects/articles", headers=asked)
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == APP


@pytest.mark.parametrize(
    ("create_app", "scope", "object_name", "custom_route"),
    [
        (starlette_site, "books.read", "books", "/books/stats"),
        (fastapi_site, "records.read", "records", "/records/genres"),
        (raw_asgi_site, "recipes.read", "recipes", "/recipes/quick"),
    ],
    ids=["starlette", "fastapi", "raw_asgi"],
)
def test_each_example_host_serves_the_api_through_starlettes_test_client(
    url, create_app, scope, object_name, custom_route
):
    with TestClient(create_app(url)) as client:  # the host's start installs the library's tables
        auth = {"Authorization": f"Bearer {asyncio.run(_prepared(url, scope))}"}
        listed = client.get(f"{API}/objects/{object_name}", headers=auth)
        assert listed.status_code == 200, listed.text
        assert listed.json()["meta"]["total"] == 3
        record = listed.json()["data"][0]["id"]
        assert client.get(f"{API}/objects/{object_name}/{record}", headers=auth).status_code == 200
        custom = client.get(API + custom_route, headers=auth)
        assert custom.status_code == 200, custom.text
        assert "x-ratelimit-remaining" in custom.headers


async def _site_installed(config) -> None:
    """`init` the example site and add its administrator, as `python -m examples.site init` does."""
    site = create_site(config)
    await init(config)
    async with site.running():
        await UserStore(site.database).create("admin", PASSWORD)


def test_the_example_sites_administration_and_api_work_through_starlettes_test_client(url):
    config = SiteConfig(site_dir=EXAMPLE_DIR, database_url=url)
    asyncio.run(_site_installed(config))
    with TestClient(create_site(config).app) as client:
        assert client.get("/").status_code == 200
        login = client.get("/mgr/login")
        signed_in = client.post(
            "/mgr/login",
            data={"username": "admin", "password": PASSWORD, "csrf_token": _csrf(login.text)},
            follow_redirects=False,
        )
        assert signed_in.status_code == 303, signed_in.text
        form = client.get("/mgr/pb/tokens")
        created = client.post(
            "/mgr/pb/tokens",
            data={"name": "app", "scopes": "articles.read", "csrf_token": _csrf(form.text)},
            follow_redirects=False,
        )
        assert created.status_code == 303, created.text
        revealed = client.get(created.headers["location"])
        plain = re.search(r'id="token-value">(pb_[0-9A-Za-z]+)<', revealed.text)
        assert plain is not None, revealed.text
        assert client.get("/mgr/pb/docs?ctx=mgr").status_code == 200
        articles = client.get(
            f"{API}/objects/articles", headers={"Authorization": f"Bearer {plain.group(1)}"}
        )
        assert articles.status_code == 200, articles.text
        assert articles.json()["meta"]["total"] >= 1


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found is not None, "no CSRF token on the page"
    return found.group(1)
