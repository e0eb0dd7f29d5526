"""docs/cors-and-rate-limits.md: 120 requests a minute per client, over HTTP."""

import logging

import httpx
import pytest

from pb_headless import HeadlessAPI, route
from pb_headless.ratelimit import MemoryRateLimiter
from pb_headless.ratelimit.redis import RedisRateLimiter
from tests.servers.processes import free_port, uvicorn_servers
from tests.servers.services import forget, shared_redis, unique_prefix
from tests.support.demo import create_demo, demo_registry
from tests.support.host import BASE_URL

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


@route("GET", "/reports/summary", guard="ApiAuth")
async def summary(request):
    return {"data": {"articles": 6}}


async def active_host(database, host_factory, **options):
    """A host whose API is awake: demo objects published and a token issued."""
    await create_demo(database)
    host = await host_factory(database, demo_registry(), routes=[summary], **options)
    return host, await host.token("*")


def client_at(host, address: str) -> httpx.AsyncClient:
    """A client of the same host from another address."""
    transport = httpx.ASGITransport(app=host.app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url=BASE_URL)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_every_answer_under_the_api_carries_the_rate_limit_headers(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    auth = host.auth(token)
    requests = [
        ("GET", "/health", {}),
        ("GET", "/me", auth),
        ("GET", "/objects", auth),
        ("GET", "/objects/articles", auth),
        ("GET", "/objects/articles/1", auth),
        ("HEAD", "/objects/articles", auth),
        ("GET", "/objects/nope", auth),
        ("GET", "/no/such/path", auth),
        ("PUT", "/objects/articles", auth),
        ("GET", "/reports/summary", auth),
        ("GET", "/me", {}),
        ("GET", "/me", {"Authorization": "Bearer pb_not-a-token"}),
        ("GET", "/objects", {"X-API-Key": token, "Authorization": "Bearer pb_other"}),
    ]
    remaining = []
    for method, path, headers in requests:
        response = await host.client.request(method, "/api/pb/v1" + path, headers=headers)
        assert all(name in response.headers for name in RATE_HEADERS), (method, path, response.status_code)
        assert response.headers["X-RateLimit-Limit"] == "120"
        remaining.append(int(response.headers["X-RateLimit-Remaining"]))
    assert remaining == list(range(119, 119 - len(requests), -1))


async def test_a_dormant_api_counts_and_its_401s_carry_the_headers(sqlite_database, host_factory):
    host = await host_factory(sqlite_database)
    response = await host.client.get("/api/pb/v1/objects")
    assert response.status_code == 401
    assert response.headers["X-RateLimit-Remaining"] == "119"


async def test_the_121st_request_within_a_minute_is_refused_whatever_the_token(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    statuses = [(await host.client.get("/api/pb/v1/health")).status_code for _ in range(120)]
    assert statuses == [200] * 120
    refused = await host.client.get("/api/pb/v1/me", headers=host.auth(token))
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited" and refused.json()["message"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.headers["X-RateLimit-Limit"] == "120"
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429


async def test_refused_requests_still_carry_a_reset_in_the_future(sqlite_database, host_factory):
    clock = Clock()
    host = await host_factory(sqlite_database, rate_limiter=MemoryRateLimiter(limit=1, clock=clock))
    first = await host.client.get("/api/pb/v1/health")
    clock.now += 15
    refused = await host.client.get("/api/pb/v1/health")
    assert refused.status_code == 429
    assert refused.headers["X-RateLimit-Reset"] == first.headers["X-RateLimit-Reset"] == "1800000060"
    assert refused.headers["Retry-After"] == "45"


async def test_the_window_slides_rather_than_resetting(sqlite_database, host_factory):
    clock = Clock()
    host = await host_factory(sqlite_database, rate_limiter=MemoryRateLimiter(limit=2, clock=clock))
    await host.client.get("/api/pb/v1/health")
    clock.now += 30
    await host.client.get("/api/pb/v1/health")
    clock.now += 29
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429
    clock.now += 1
    assert (await host.client.get("/api/pb/v1/health")).status_code == 200
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429


async def test_a_limiter_of_its_own_is_asked_through_its_hit(sqlite_database, host_factory):
    """The in-process limiter is asked without a coroutine; a subclass keeps its own `hit`."""

    class Counting(MemoryRateLimiter):
        asked = 0

        async def hit(self, key):
            Counting.asked += 1
            return await super().hit(key)

    host = await host_factory(sqlite_database, rate_limiter=Counting(limit=1))
    assert (await host.client.get("/api/pb/v1/health")).status_code == 200
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429
    assert Counting.asked == 2


async def test_custom_routes_count(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory, rate_limit=2)
    assert (await host.client.get("/api/pb/v1/reports/summary", headers=host.auth(token))).status_code == 200
    assert (await host.client.get("/api/pb/v1/reports/summary", headers=host.auth(token))).status_code == 200
    refused = await host.client.get("/api/pb/v1/reports/summary", headers=host.auth(token))
    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"


async def test_options_is_never_counted_nor_refused(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=2)
    for _ in range(5):
        answer = await host.client.options("/api/pb/v1/health")
        assert answer.status_code == 204 and answer.headers["X-RateLimit-Remaining"] == "2"
    await host.client.get("/api/pb/v1/health")
    await host.client.get("/api/pb/v1/health")
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429
    answer = await host.client.options("/api/pb/v1/objects/articles", headers={"Origin": "https://app.test"})
    assert answer.status_code == 204 and answer.headers["X-RateLimit-Remaining"] == "0"


async def test_clients_are_counted_apart(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=1)
    assert (await host.client.get("/api/pb/v1/health")).status_code == 200
    assert (await host.client.get("/api/pb/v1/health")).status_code == 429
    async with client_at(host, "198.51.100.20") as other:
        assert (await other.get("/api/pb/v1/health")).status_code == 200


async def test_ipv6_clients_count_per_64(sqlite_database, host_factory):
    host = await host_factory(sqlite_database, rate_limit=2)
    async with (
        client_at(host, "2001:db8:1:2::1") as first,
        client_at(host, "2001:db8:1:2:ffff::9") as same_64,
        client_at(host, "2001:db8:1:3::1") as other_64,
    ):
        assert (await first.get("/api/pb/v1/health")).status_code == 200
        assert (await same_64.get("/api/pb/v1/health")).status_code == 200
        assert (await first.get("/api/pb/v1/health")).status_code == 429
        assert (await same_64.get("/api/pb/v1/health")).status_code == 429
        assert (await other_64.get("/api/pb/v1/health")).status_code == 200


async def test_me_reports_the_rate_state_of_its_own_headers(sqlite_database, host_factory):
    host, token = await active_host(sqlite_database, host_factory)
    response = await host.client.get("/api/pb/v1/me", headers=host.auth(token))
    assert response.json()["data"]["rate_limit"] == {
        "limit": 120,
        "remaining": int(response.headers["X-RateLimit-Remaining"]),
        "reset": int(response.headers["X-RateLimit-Reset"]),
    }


async def test_two_instances_sharing_redis_together_allow_the_limit(sqlite_database, host_factory):
    url, prefix = await shared_redis(), unique_prefix()
    limiters = [RedisRateLimiter(url, prefix=prefix), RedisRateLimiter(url, prefix=prefix)]
    try:
        hosts = [await host_factory(sqlite_database, rate_limiter=limiter) for limiter in limiters]
        statuses = [(await hosts[n % 2].client.get("/api/pb/v1/health")).status_code for n in range(130)]
    finally:
        for limiter in limiters:
            await limiter.aclose()
        await forget(url, prefix)
    assert statuses.count(200) == 120 and statuses[120:] == [429] * 10


async def test_when_redis_is_away_the_api_keeps_answering_and_limits_per_process(
    sqlite_database, host_factory, caplog
):
    host = await host_factory(sqlite_database, redis_url=f"redis://127.0.0.1:{free_port()}/0", rate_limit=2)
    with caplog.at_level(logging.WARNING, logger="pb_headless.ratelimit"):
        statuses = [(await host.client.get("/api/pb/v1/health")).status_code for _ in range(4)]
    await host.api.rate_limiter.aclose()
    assert statuses == [200, 200, 429, 429]
    assert len([r for r in caplog.records if r.name == "pb_headless.ratelimit"]) == 1


@pytest.mark.slow
async def test_two_server_processes_sharing_redis_allow_exactly_120_a_minute(sqlite_database, tmp_path):
    url, prefix = await shared_redis(), unique_prefix()
    environment = {
        "PB_TEST_SERVER_DATABASE": str(sqlite_database.url),
        "PB_TEST_SERVER_REDIS": url,
        "PB_TEST_SERVER_PREFIX": prefix,
    }
    try:
        with uvicorn_servers(2, environment, tmp_path) as servers:
            answers = await alternate(servers, 140)
    finally:
        await forget(url, prefix)
    statuses = [status for _, status, _ in answers]
    assert statuses[:120] == [200] * 120 and statuses[120:] == [429] * 20
    assert {server for server, status, _ in answers if status == 200} == set(servers)
    assert [remaining for _, _, remaining in answers[:120]] == list(range(119, -1, -1))


@pytest.mark.slow
async def test_two_server_processes_without_redis_each_limit_on_their_own(sqlite_database, tmp_path):
    environment = {"PB_TEST_SERVER_DATABASE": str(sqlite_database.url), "PB_TEST_SERVER_PREFIX": "unused"}
    with uvicorn_servers(2, environment, tmp_path) as servers:
        answers = await alternate(servers, 244)
    statuses = [status for _, status, _ in answers]
    assert statuses[:240] == [200] * 240 and statuses[240:] == [429] * 4


async def alternate(servers: list[str], count: int) -> list[tuple[str, int, int]]:
    """`count` health requests, taking turns between the servers: (server, status, remaining)."""
    answers = []
    async with httpx.AsyncClient(timeout=10) as client:
        for number in range(count):
            server = servers[number % len(servers)]
            response = await client.get(server + "/api/pb/v1/health")
            answers.append((server, response.status_code, int(response.headers["X-RateLimit-Remaining"])))
    return answers


def test_the_default_limit_is_120_a_minute(sqlite_database):
    api = HeadlessAPI(sqlite_database, demo_registry())
    assert api.rate_limiter.limit == 120
    assert api.rate_limiter.window == 60
