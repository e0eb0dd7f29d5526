"""docs/cors-and-rate-limits.md, on answers other than preflights."""

import pytest

from pb_headless.cors import EXPOSED_HEADERS, policy_of
from tests.servers.site import site_client
from tests.support.demo import create_demo, demo_registry

APP = "https://app.example.com"


async def active_host(database, host_factory, origins: str = APP, **options):
    """A host whose API is awake (objects published, a token issued), with `service_cors_origins` set."""
    await create_demo(database)
    host = await host_factory(database, demo_registry(), **options)
    token = await host.token("*")
    await host.settings.set("service_cors_origins", origins)
    return host, token


def cors_headers(response) -> dict[str, str]:
    return {
        name: value for name, value in response.headers.items() if name.lower().startswith("access-control-")
    }


def varies_on_origin(response) -> bool:
    return "origin" in [part.strip().lower() for part in response.headers.get("vary", "").split(",")]


async def get_me(host, token, origin=APP, path="/api/pb/v1/me"):
    return await host.client.get(path, headers={**host.auth(token), "Origin": origin})


async def test_cors_is_silent_while_the_origins_setting_is_empty(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory, origins="")
    response = await get_me(host, token)
    assert response.status_code == 200
    assert cors_headers(response) == {} and not varies_on_origin(response)


async def test_cors_is_silent_while_the_origins_setting_is_missing(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    await host.settings.delete("service_cors_origins")
    response = await get_me(host, token)
    assert response.status_code == 200 and cors_headers(response) == {}


async def test_cors_is_silent_while_no_token_exists(sqlite_database, host_factory):
    await create_demo(sqlite_database)
    host = await host_factory(sqlite_database, demo_registry())
    await host.settings.set("service_cors_origins", "*")
    for path in ("/api/pb/v1/health", "/api/pb/v1/objects", "/api/pb/v1/objects/articles"):
        response = await host.client.get(path, headers={"Origin": APP})
        assert cors_headers(response) == {}, path
    assert response.status_code == 401


async def test_cors_is_silent_while_no_object_is_published(sqlite_database, host_factory):
    host = await host_factory(sqlite_database)
    token = await host.token("*")
    await host.settings.set("service_cors_origins", APP)
    assert cors_headers(await get_me(host, token)) == {}
    assert cors_headers(await host.client.get("/api/pb/v1/health", headers={"Origin": APP})) == {}


async def test_cors_is_silent_again_when_the_last_token_is_disabled(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    assert cors_headers(await get_me(host, token))
    await host.tokens.disable("token-1")
    assert cors_headers(await host.client.get("/api/pb/v1/health", headers={"Origin": APP})) == {}


async def test_an_allowed_origin_gets_itself_vary_and_the_exposed_headers(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    response = await get_me(host, token)
    assert response.status_code == 200
    assert cors_headers(response) == {
        "access-control-allow-origin": APP,
        "access-control-expose-headers": EXPOSED_HEADERS,
    }
    assert varies_on_origin(response)
    exposed = {name.strip() for name in EXPOSED_HEADERS.split(",")}
    assert exposed == {
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "Retry-After",
        "Location",
        "X-Truncated-Relations",
        "ETag",
        "Idempotent-Replayed",
        "Preference-Applied",
    }


async def test_a_disallowed_origin_gets_no_cors_headers_but_still_vary(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    response = await get_me(host, token, origin="https://other.example.org")
    assert response.status_code == 200
    assert cors_headers(response) == {} and varies_on_origin(response)


@pytest.mark.parametrize(
    "origin, allowed",
    [
        ("https://a.example.com", True),
        ("https://a.b.example.com", True),
        ("https://evil-example.com", False),
        ("https://a.example.com.evil.net", False),
        ("http://a.example.com", False),
        ("https://example.com", False),
        ("https://evilexample.com", False),
    ],
)
async def test_a_subdomain_pattern_allows_subdomains_and_no_look_alike(
    sqlite_database, host_factory, origin, allowed
):
    host, token = await active_host(sqlite_database, host_factory, origins="https://*.example.com")
    response = await get_me(host, token, origin=origin)
    assert response.headers.get("access-control-allow-origin") == (origin if allowed else None)


@pytest.mark.parametrize(
    "origin",
    [
        "https://app.example.com.evil.net",
        "http://app.example.com",
        "https://evil-app.example.com",
        "https://example.com",
        "https://app.example.com:444",
    ],
)
async def test_an_exact_origin_allows_nothing_else(sqlite_database, host_factory, origin):
    host, token = await active_host(sqlite_database, host_factory, origins=f"https://news.test, {APP}")
    assert cors_headers(await get_me(host, token, origin=origin)) == {}
    assert cors_headers(await get_me(host, token, origin="https://news.test"))


async def test_star_answers_star(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory, origins="*")
    response = await get_me(host, token, origin="https://anyone.test")
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers and varies_on_origin(response)


async def test_star_with_credentials_answers_star_without_allowing_credentials(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory, origins="*")
    await host.settings.set("service_cors_credentials", "yes")
    response = await get_me(host, token, origin="https://anyone.test")
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers


async def test_a_listed_origin_with_credentials_is_allowed_credentials(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    await host.settings.set("service_cors_credentials", "1")
    response = await get_me(host, token)
    assert response.headers["access-control-allow-origin"] == APP
    assert response.headers["access-control-allow-credentials"] == "true"


@pytest.mark.parametrize(
    "request_line, status",
    [
        (("GET", "/api/pb/v1/health", False), 200),
        (("GET", "/api/pb/v1/me", False), 401),
        (("GET", "/api/pb/v1/me", "pb_wrong"), 401),
        (("GET", "/api/pb/v1/objects/nope", True), 404),
        (("PUT", "/api/pb/v1/objects/articles", True), 405),
        (("GET", "/api/pb/v1/no/such/path", True), 404),
    ],
)
async def test_errors_carry_the_cors_headers_so_a_browser_can_read_them(
    sqlite_database, host_factory, request_line, status
):
    host, token = await active_host(sqlite_database, host_factory)
    method, path, auth = request_line
    headers = {"Origin": APP, **(host.auth(auth if isinstance(auth, str) else token) if auth else {})}
    response = await host.client.request(method, path, headers=headers)
    assert response.status_code == status
    assert response.headers["access-control-allow-origin"] == APP and varies_on_origin(response)
    assert "x-ratelimit-remaining" in response.headers


async def test_a_429_carries_the_cors_headers_and_exposes_retry_after(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory, rate_limit=1)
    await get_me(host, token)
    refused = await get_me(host, token)
    assert refused.status_code == 429
    assert refused.headers["access-control-allow-origin"] == APP and varies_on_origin(refused)
    assert "Retry-After" in refused.headers["access-control-expose-headers"]


async def test_answers_without_an_origin_still_vary_on_origin(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    response = await host.client.get("/api/pb/v1/me", headers=host.auth(token))
    assert response.status_code == 200 and varies_on_origin(response) and cors_headers(response) == {}


async def test_api_paths_outside_the_cors_paths_get_no_cors_headers(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    await host.settings.set("service_cors_paths", "api/pb/v1/objects*")
    assert cors_headers(await get_me(host, token)) == {}
    assert not varies_on_origin(await get_me(host, token))
    assert cors_headers(await get_me(host, token, path="/api/pb/v1/objects"))


async def test_host_pages_get_cors_headers_only_under_the_cors_paths(sqlite_database, host_factory):
    host, _ = await active_host(sqlite_database, host_factory)
    async with site_client(host.api) as client:
        news = await client.get("/api/site/news", headers={"Origin": APP})
        blog = await client.get("/blog", headers={"Origin": APP})
    assert news.status_code == 200 and news.headers["access-control-allow-origin"] == APP
    assert news.headers["vary"] == "Accept-Encoding, Origin"
    assert blog.status_code == 200 and blog.text == "the host's page /blog"
    assert cors_headers(blog) == {} and blog.headers["vary"] == "Accept-Encoding"


async def test_the_administration_area_never_gets_cors_headers(sqlite_database, host_factory):
    host, _ = await active_host(sqlite_database, host_factory, origins="*")
    await host.settings.set("service_cors_paths", "*")
    async with site_client(host.api) as client:
        admin = await client.get("/mgr/pb/docs", headers={"Origin": APP})
        blog = await client.get("/blog", headers={"Origin": APP})
    assert admin.status_code == 200 and cors_headers(admin) == {}
    assert blog.headers["access-control-allow-origin"] == "*"


async def test_a_change_of_setting_takes_effect_without_a_restart(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    assert (await get_me(host, token)).headers["access-control-allow-origin"] == APP
    await host.settings.set("service_cors_origins", "https://news.test")
    assert cors_headers(await get_me(host, token)) == {}
    assert (await get_me(host, token, origin="https://news.test")).headers["access-control-allow-origin"]
    await host.settings.set("service_cors_origins", "")
    assert cors_headers(await get_me(host, token, origin="https://news.test")) == {}


async def test_the_policy_is_compiled_once_per_settings_change(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    await get_me(host, token)
    snapshot = host.api.snapshots.current
    policy = policy_of(snapshot)
    for _ in range(3):
        await get_me(host, token)
        await host.client.get("/api/pb/v1/health", headers={"Origin": APP})
    assert host.api.snapshots.current is snapshot and policy_of(snapshot) is policy
    await host.settings.set("service_cors_max_age", "60")
    await get_me(host, token)
    assert policy_of(host.api.snapshots.current) is not policy


async def test_create_and_update_answers_vary_as_reads_do_origin_included(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    headers = {**host.auth(token), "Origin": APP}
    address = "/api/pb/v1/objects/articles"
    created = await host.client.post(address, json={"title": "Across origins"}, headers=headers)
    patched = await host.client.patch(created.headers["location"], json={"views": 2}, headers=headers)
    read = await host.client.get(created.headers["location"], headers=headers)
    assert (created.status_code, patched.status_code, read.status_code) == (201, 200, 200)
    for response in (created, patched, read):
        assert response.headers["vary"] == "Authorization, X-API-Key, Origin"
        assert response.headers["access-control-allow-origin"] == APP
