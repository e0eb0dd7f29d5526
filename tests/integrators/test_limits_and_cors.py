"""docs/cors-and-rate-limits.md (custom routes count, and get CORS): custom routes get CORS like the rest."""

from pb_headless import route

API = "/api/pb/v1"
APP = "https://app.example.com"


@route("GET", "/reports/summary", guard="ApiAuth:reports.read")
async def summary(request):
    return {"ok": True}


@route("POST", "/reports/summary", guard="ApiAuth:reports.write")
async def recompute(request):
    return {"recomputed": True}


async def test_custom_routes_count_toward_the_rate_limit_with_the_generic_ones(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, [summary], rate_limit=3)
    auth = host.auth(await host.token("*"))
    first = await host.client.get(API + "/reports/summary", headers=auth)
    assert (first.headers["x-ratelimit-limit"], first.headers["x-ratelimit-remaining"]) == ("3", "2")
    assert (await host.client.get(API + "/me", headers=auth)).headers["x-ratelimit-remaining"] == "1"
    assert (await host.client.get(API + "/reports/summary")).status_code == 401  # refusals count too
    over = await host.client.get(API + "/reports/summary", headers=auth)
    assert over.status_code == 429
    assert over.json()["error"] == "rate_limited"
    assert int(over.headers["retry-after"]) >= 1
    assert over.headers["x-ratelimit-remaining"] == "0"


async def test_the_hosts_own_pages_are_not_counted(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, [summary], rate_limit=2)
    auth = host.auth(await host.token("*"))
    for _ in range(5):
        page = await host.client.get("/")
        assert page.status_code == 200
        assert not any(key.startswith("x-ratelimit") for key in page.headers)
    assert (await host.client.get(API + "/reports/summary", headers=auth)).status_code == 200


async def test_custom_routes_get_cors_headers_when_origins_are_set(database, routed_host):
    host = await routed_host(database, [summary, recompute])
    auth = host.auth(await host.token("*"))
    quiet = await host.client.get(API + "/reports/summary", headers={**auth, "Origin": APP})
    assert not any(key.startswith("access-control-") for key in quiet.headers)
    await host.settings.set("service_cors_origins", APP)
    answer = await host.client.get(API + "/reports/summary", headers={**auth, "Origin": APP})
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == APP
    assert "Origin" in answer.headers["vary"]
    assert "X-RateLimit-Remaining" in answer.headers["access-control-expose-headers"]
    refused = await host.client.get(API + "/reports/summary", headers={"Origin": APP})
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == APP  # so the app can read the 401
    stranger = await host.client.get(
        API + "/reports/summary", headers={**auth, "Origin": "https://evil.test"}
    )
    assert "access-control-allow-origin" not in stranger.headers


async def test_a_preflight_for_a_custom_route_is_answered_before_routing(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, [summary, recompute], rate_limit=1)
    await host.token("*")
    await host.settings.set("service_cors_origins", APP)
    for _ in range(3):  # never counted, never 405
        preflight = await host.client.options(
            API + "/reports/summary",
            headers={
                "Origin": APP,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "Authorization, Content-Type",
            },
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == APP
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "Authorization" in preflight.headers["access-control-allow-headers"]


async def test_host_pages_get_no_cors_outside_the_cors_paths(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, [summary])
    await host.token("*")
    await host.settings.set("service_cors_origins", "*")
    page = await host.client.get("/", headers={"Origin": APP})
    assert page.status_code == 200
    assert not any(key.startswith("access-control-") for key in page.headers)
    assert not any(key.startswith("x-ratelimit") for key in page.headers)
