"""The card's "embeddable in any ASGI host": a Starlette app, a FastAPI app and a bare ASGI callable.

Each example host is started as an ASGI app (lifespan included) and must serve the API, its custom
route and its guarded route, while its own pages behave as if the API did not exist.
"""

from dataclasses import dataclass
from typing import Any

import pytest

from examples.fastapi_host.app import create_app as fastapi_site
from examples.raw_asgi_host.app import create_app as raw_asgi_site
from examples.starlette_host.app import create_app as starlette_site
from pb_headless import SettingsStore, TokenStore
from tests.hosts.lifespan import serving

API = "/api/pb/v1"
APP = "https://app.example.com"


@dataclass(frozen=True)
class Site:
    create_app: Any
    scope: str
    object_name: str
    objects: int
    custom_route: str
    custom_answer: dict
    guarded_route: str
    guarded_text: str
    page_text: str


SITES = {
    "starlette": Site(
        starlette_site,
        "books.read",
        "books",
        3,
        "/books/stats",
        {"data": {"books": 3, "cheapest": "8.25", "dearest": "12.00"}, "asked_by": "reader"},
        "/reports/books.csv",
        "Roadside Picnic,1972",
        "<h1>Bookshop</h1>",
    ),
    "fastapi": Site(
        fastapi_site,
        "records.read",
        "records",
        3,
        "/records/genres",
        {"data": [{"genre": "jazz", "records": 2}, {"genre": "rock", "records": 1}], "asked_by": None},
        "/reports/records/1",
        '"title":"Kind of Blue"',
        "<h1>Record shop</h1>",
    ),
    "raw_asgi": Site(
        raw_asgi_site,
        "recipes.read",
        "recipes",
        3,
        "/recipes/quick",
        {"data": [{"id": 3, "title": "Syrniki", "minutes": 30}], "meta": {"minutes": 30}},
        "/reports/favourites",
        '"favourites":["Borscht","Syrniki"]',
        "<h1>Recipes</h1>",
    ),
}


@pytest.fixture(params=list(SITES))
def site(request) -> Site:
    return SITES[request.param]


async def bearer(database, scopes, name="reader", **options):
    _, plain = await TokenStore(database).create(name, scopes, **options)
    return {"Authorization": f"Bearer {plain}"}


def assert_untouched_by_the_api(response):
    """A host answer with nothing of the API in it."""
    assert not any(key.startswith(("x-ratelimit", "access-control-")) for key in response.headers)
    assert "www-authenticate" not in response.headers


async def test_each_host_serves_its_page_the_api_and_its_custom_route(database, site):
    async with serving(site.create_app(str(database.url))) as client:
        page = await client.get("/")
        assert page.status_code == 200 and site.page_text in page.text
        auth = await bearer(database, site.scope)
        listed = await client.get(f"{API}/objects/{site.object_name}", headers=auth)
        assert listed.status_code == 200
        assert listed.json()["meta"]["total"] == site.objects
        custom = await client.get(API + site.custom_route, headers=auth)
        assert custom.status_code == 200
        assert custom.json() == site.custom_answer
        assert "x-ratelimit-remaining" in custom.headers


async def test_each_hosts_custom_route_refuses_like_a_generic_endpoint(sqlite_database, site):
    async with serving(site.create_app(str(sqlite_database.url))) as client:
        other = await bearer(sqlite_database, "nothing.read", name="other")
        missing = await client.get(API + site.custom_route)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == 'Bearer realm="pb_headless"'
        forbidden = await client.get(API + site.custom_route, headers=other)
        if site.object_name == "recipes":  # that route takes any live token
            assert forbidden.status_code == 200
        else:
            assert (forbidden.status_code, forbidden.json()["required_scope"]) == (403, site.scope)


async def test_each_hosts_guarded_route_answers_401_403_and_200(database, site):
    async with serving(site.create_app(str(database.url))) as client:
        reader = await bearer(database, site.scope)
        other = await bearer(database, "nothing.read", name="other")
        missing = await client.get(site.guarded_route)
        assert missing.status_code == 401
        assert missing.json()["error"] == "unauthorized"
        assert missing.headers["www-authenticate"] == 'Bearer realm="pb_headless"'
        assert (await client.get(site.guarded_route, headers={"X-API-Key": "pb_bad"})).status_code == 401
        forbidden = await client.get(site.guarded_route, headers=other)
        assert forbidden.status_code == 403
        assert forbidden.json() == {
            "error": "forbidden",
            "required_scope": site.scope,
            "message": f"This operation requires the scope '{site.scope}'.",
        }
        allowed = await client.get(site.guarded_route, headers=reader)
        assert allowed.status_code == 200
        assert site.guarded_text in allowed.text
        assert not any(key.startswith("x-ratelimit") for key in allowed.headers)


async def test_each_hosts_own_pages_behave_as_if_the_api_did_not_exist(sqlite_database, site):
    async with serving(site.create_app(str(sqlite_database.url))) as client:
        await bearer(sqlite_database, site.scope)
        await SettingsStore(sqlite_database).set("service_cors_origins", "*")
        for _ in range(125):  # past the API's 120 a minute: host pages are not counted
            page = await client.get("/", headers={"Origin": APP})
            assert page.status_code == 200
        assert_untouched_by_the_api(page)
        health = await client.get(API + "/health", headers={"Origin": APP})
        assert health.headers["x-ratelimit-remaining"] == "119"
        assert health.headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize("path", ["/api/other", "/api/pb", "/api/pb/v2/objects", "/api/pb/v1other"])
async def test_a_host_path_next_to_the_api_is_the_hosts_own_404(sqlite_database, site, path):
    async with serving(site.create_app(str(sqlite_database.url))) as client:
        auth = await bearer(sqlite_database, site.scope)
        response = await client.get(path, headers=auth)
        assert response.status_code == 404
        assert not any(key.startswith("x-ratelimit") for key in response.headers)
        if response.headers.get("content-type", "").startswith("application/json"):
            assert "error" not in response.json()  # FastAPI's {"detail": "Not Found"}, not the envelope


async def test_each_host_answers_preflights_under_the_api_before_its_own_routing(sqlite_database, site):
    async with serving(site.create_app(str(sqlite_database.url))) as client:
        await bearer(sqlite_database, site.scope)
        await SettingsStore(sqlite_database).set("service_cors_origins", APP)
        asked = {
            "Origin": APP,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "X-API-Key",
        }
        preflight = await client.options(API + site.custom_route, headers=asked)
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == APP
        assert "X-API-Key" in preflight.headers["access-control-allow-headers"]
        guarded = await client.options(site.guarded_route, headers=asked)
        assert "access-control-allow-origin" not in guarded.headers  # outside service_cors_paths
