"""`AdminApp` on a host of its own: the guard it is given, with or without a login address."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import Mount

from pb_headless import ApiRegistry, HeadlessAPI
from pb_headless.admin import AdminApp


def client_for(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


def host(admin: AdminApp, *, sessions: bool = True):
    site = Starlette(routes=[Mount("/mgr/pb", app=admin)])
    return SessionMiddleware(site, secret_key="s" * 40) if sessions else site


async def test_without_a_login_address_a_request_without_an_admin_gets_401(sqlite_database):
    api = HeadlessAPI(sqlite_database, ApiRegistry())
    async with client_for(host(AdminApp(api, current_admin=lambda request: None))) as client:
        for path in ("/mgr/pb/tokens", "/mgr/pb/settings/cors"):
            assert (await client.get(path)).status_code == 401
        assert (await client.post("/mgr/pb/tokens", data={"name": "x", "scopes": "*"})).status_code == 401
    assert await api.tokens.list() == []


async def test_with_a_login_address_it_redirects_there_and_asks_to_come_back(sqlite_database):
    api = HeadlessAPI(sqlite_database, ApiRegistry())
    admin = AdminApp(api, current_admin=lambda request: None, login_url="/signin?from=admin")
    async with client_for(host(admin)) as client:
        answer = await client.get("/mgr/pb/tokens?x=1")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/signin?from=admin&next=%2Fmgr%2Fpb%2Ftokens%3Fx%3D1"


async def test_a_sync_guard_returning_a_user_object_opens_the_pages(sqlite_database):
    class User:
        username = "root"

    api = HeadlessAPI(sqlite_database, ApiRegistry())
    async with client_for(host(AdminApp(api, current_admin=lambda request: User()))) as client:
        page = await client.get("/mgr/pb/tokens")
        css = await client.get("/mgr/pb/static/admin.css")
    assert page.status_code == 200 and "No token yet" in page.text and "root" in page.text
    assert "Tables" not in page.text  # no constructor loader, no tables section
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


async def test_a_host_without_sessions_is_told_what_is_missing(sqlite_database):
    api = HeadlessAPI(sqlite_database, ApiRegistry())
    admin = AdminApp(api, current_admin=lambda request: {"username": "root"})
    with pytest.raises(RuntimeError, match="SessionMiddleware"):
        async with client_for(host(admin, sessions=False)) as client:
            await client.get("/mgr/pb/tokens")
