"""docs/cors-and-rate-limits.md and docs/endpoints.md ("Paths and methods"): OPTIONS is answered before
routing."""

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from tests.servers.site import site_client
from tests.support.demo import create_demo, demo_registry
from tests.support.host import BASE_URL

APP = "https://app.example.com"
PREFLIGHT = {
    "Origin": APP,
    "Access-Control-Request-Method": "PATCH",
    "Access-Control-Request-Headers": "authorization, content-type",
}
DEFAULT_HEADERS = (
    "Authorization,Content-Type,X-Requested-With,X-API-Key,If-Match,If-None-Match,Idempotency-Key"
)
API_PATHS = [
    "/api/pb/v1",
    "/api/pb/v1/",
    "/api/pb/v1/health",
    "/api/pb/v1/me",
    "/api/pb/v1/objects",
    "/api/pb/v1/openapi.json",
    "/api/pb/v1/objects/articles",
    "/api/pb/v1/objects/articles/1",
    "/api/pb/v1/objects/nope",
    "/api/pb/v1/objects/nope/1",
    "/api/pb/v1/no/such/path",
    "/api/pb/v1/objects/articles/1/too/deep",
]


async def active_host(database, host_factory, origins: str = APP, **options):
    await create_demo(database)
    host = await host_factory(database, demo_registry(), **options)
    await host.token("*")
    await host.settings.set("service_cors_origins", origins)
    return host


def cors_headers(response) -> dict[str, str]:
    return {
        name: value for name, value in response.headers.items() if name.lower().startswith("access-control-")
    }


@pytest.mark.parametrize("path", API_PATHS)
async def test_a_plain_options_is_204_on_every_api_path_while_dormant(sqlite_database, host_factory, path):
    host = await host_factory(sqlite_database)
    for headers in ({}, {"Origin": APP}, PREFLIGHT):
        response = await host.client.options(path, headers=headers)
        assert response.status_code == 204 and response.content == b"", (path, headers)
        assert cors_headers(response) == {}


@pytest.mark.parametrize("path", API_PATHS)
async def test_a_plain_options_is_204_on_every_api_path_while_awake(sqlite_database, host_factory, path):
    host = await active_host(sqlite_database, host_factory)
    without_origin = await host.client.options(path)
    assert without_origin.status_code == 204 and cors_headers(without_origin) == {}
    assert (await host.client.options(path, headers={"Origin": APP})).status_code == 204


async def test_a_preflight_from_an_allowed_origin_gets_the_configured_lists(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory)
    response = await host.client.options("/api/pb/v1/objects/articles/1", headers=PREFLIGHT)
    assert response.status_code == 204
    assert cors_headers(response) == {
        "access-control-allow-origin": APP,
        "access-control-allow-methods": "GET,POST,PUT,PATCH,DELETE,OPTIONS",
        "access-control-allow-headers": DEFAULT_HEADERS,
        "access-control-max-age": "86400",
    }
    assert response.headers["vary"] == "Origin"


async def test_a_preflight_for_an_unknown_object_is_answered_like_any_other(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory)
    known = await host.client.options("/api/pb/v1/objects/articles", headers=PREFLIGHT)
    unknown = await host.client.options("/api/pb/v1/objects/secret_things", headers=PREFLIGHT)
    assert unknown.status_code == known.status_code == 204
    assert cors_headers(unknown) == cors_headers(known) != {}


async def test_a_preflight_asking_for_more_than_the_settings_allow_still_gets_the_configured_lists(
    sqlite_database, host_factory
):
    host = await active_host(sqlite_database, host_factory)
    await host.settings.set("service_cors_methods", "GET")
    asking = {
        "Origin": APP,
        "Access-Control-Request-Method": "DELETE",
        "Access-Control-Request-Headers": "x-secret",
    }
    response = await host.client.options("/api/pb/v1/objects/articles/1", headers=asking)
    assert response.status_code == 204
    assert response.headers["access-control-allow-methods"] == "GET"
    assert response.headers["access-control-allow-headers"] == DEFAULT_HEADERS


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil-example.com",
        "https://app.example.com.evil.net",
        "http://app.example.com",
        "https://example.com",
        "null",
    ],
)
async def test_a_preflight_from_a_disallowed_origin_is_204_without_cors_headers(
    sqlite_database, host_factory, origin
):
    host = await active_host(sqlite_database, host_factory)
    headers = {**PREFLIGHT, "Origin": origin}
    response = await host.client.options("/api/pb/v1/objects/articles", headers=headers)
    assert response.status_code == 204 and cors_headers(response) == {}


async def test_a_preflight_while_cors_is_off_is_204_without_cors_headers(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory, origins="")
    response = await host.client.options("/api/pb/v1/objects/articles", headers=PREFLIGHT)
    assert response.status_code == 204 and cors_headers(response) == {}


async def test_a_preflight_while_dormant_is_204_without_cors_headers(sqlite_database, host_factory):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    await host.settings.set("service_cors_origins", "*")
    response = await host.client.options("/api/pb/v1/objects/articles", headers=PREFLIGHT)
    assert response.status_code == 204 and cors_headers(response) == {}


async def test_the_preflight_settings_take_effect_without_a_restart(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory)
    changes = {"methods": "GET, POST", "headers": "X-API-Key", "max_age": "600", "credentials": "on"}
    for key, value in changes.items():
        await host.settings.set(f"service_cors_{key}", value)
    response = await host.client.options("/api/pb/v1/objects/articles", headers=PREFLIGHT)
    assert cors_headers(response) == {
        "access-control-allow-origin": APP,
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": "GET,POST",
        "access-control-allow-headers": "X-API-Key",
        "access-control-max-age": "600",
    }


async def test_a_preflight_with_star_answers_star_and_never_credentials(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory, origins="*")
    await host.settings.set("service_cors_credentials", "yes")
    response = await host.client.options(
        "/api/pb/v1/me", headers={**PREFLIGHT, "Origin": "https://anyone.test"}
    )
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers


async def test_a_plain_options_with_an_allowed_origin_gets_the_origin_but_no_preflight_lists(
    sqlite_database, host_factory
):
    host = await active_host(sqlite_database, host_factory)
    response = await host.client.options("/api/pb/v1/objects/articles", headers={"Origin": APP})
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == APP
    assert "access-control-allow-methods" not in response.headers


async def test_preflights_are_never_rate_limited(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory, rate_limit=1)
    await host.client.get("/api/pb/v1/health")
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429
    for _ in range(3):
        response = await host.client.options("/api/pb/v1/objects/articles", headers=PREFLIGHT)
        assert response.status_code == 204 and response.headers["access-control-allow-origin"] == APP
        assert response.headers["x-ratelimit-remaining"] == "0"


async def test_api_paths_outside_the_cors_paths_get_a_bare_204(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory)
    await host.settings.set("service_cors_paths", "public/*")
    response = await host.client.options("/api/pb/v1/objects/articles", headers=PREFLIGHT)
    assert response.status_code == 204 and cors_headers(response) == {}


async def test_host_paths_outside_the_cors_paths_are_left_to_the_host(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory)
    async with site_client(host.api) as client:
        for headers in ({}, {"Origin": APP}, PREFLIGHT):
            response = await client.options("/blog", headers=headers)
            assert response.status_code == 405 and cors_headers(response) == {}


async def test_host_paths_under_the_cors_paths_get_their_preflight_answered(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory)
    async with site_client(host.api) as client:
        preflight = await client.options("/api/site/news", headers=PREFLIGHT)
        plain = await client.options("/api/site/news")
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == APP
    assert preflight.headers["access-control-allow-methods"] == "GET,POST,PUT,PATCH,DELETE,OPTIONS"
    assert "x-ratelimit-limit" not in preflight.headers  # the host's page is not the API's to count
    assert plain.status_code == 405  # without a preflight's headers the host answers for itself


async def test_host_paths_are_left_to_the_host_while_dormant(sqlite_database, host_factory):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    await host.settings.set("service_cors_origins", APP)
    async with site_client(host.api) as client:
        response = await client.options("/api/site/news", headers=PREFLIGHT)
    assert response.status_code == 405 and cors_headers(response) == {}


async def test_the_administration_area_never_gets_a_preflight_answer(sqlite_database, host_factory):
    host = await active_host(sqlite_database, host_factory, origins="*")
    await host.settings.set("service_cors_paths", "*")
    async with site_client(host.api) as client:
        admin = await client.options("/mgr/pb/docs", headers=PREFLIGHT)
        blog = await client.options("/blog", headers=PREFLIGHT)
    assert admin.status_code == 405 and cors_headers(admin) == {}
    assert blog.status_code == 204 and blog.headers["access-control-allow-origin"] == "*"


async def test_an_api_mounted_without_the_middleware_still_answers_options_with_204(
    sqlite_database, host_factory
):
    host = await active_host(sqlite_database, host_factory, rate_limit=1)
    bare = Starlette(routes=[Mount("/api/pb/v1", app=host.api)])
    transport = httpx.ASGITransport(app=bare, client=("203.0.113.7", 50000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        for _ in range(3):
            response = await client.options("/api/pb/v1/objects/articles", headers=PREFLIGHT)
            assert response.status_code == 204 and response.headers["x-ratelimit-remaining"] == "1"
