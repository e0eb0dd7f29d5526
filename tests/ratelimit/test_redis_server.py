"""pb_headless/ratelimit/redis.py against real Redis servers: one exact sliding window for every
process, and a per-process fallback while Redis is away (the logic alone: tests/unit/ratelimit)."""

import asyncio
import logging
import time

import pytest
from redis.asyncio import Redis

from pb_headless.ratelimit.redis import RedisRateLimiter
from tests.servers.processes import free_port, redis_server
from tests.servers.services import forget, shared_redis, unique_prefix

LOGGER = "pb_headless.ratelimit"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def redis_url():
    url = await shared_redis()
    prefixes: list[str] = []
    yield url, prefixes
    for prefix in prefixes:
        await forget(url, prefix)


def limiter_for(redis_url, **options) -> RedisRateLimiter:
    url, prefixes = redis_url
    options.setdefault("prefix", unique_prefix())
    prefixes.append(options["prefix"])
    return RedisRateLimiter(url, **options)


async def test_the_limit_is_allowed_and_the_next_request_is_refused(redis_url):
    limiter = limiter_for(redis_url)
    try:
        decisions = [await limiter.hit("203.0.113.7") for _ in range(121)]
    finally:
        await limiter.aclose()
    assert all(d.allowed for d in decisions[:120]) and not decisions[120].allowed
    assert [d.remaining for d in (decisions[0], decisions[119], decisions[120])] == [119, 0, 0]
    assert 1 <= decisions[120].retry_after <= 60
    assert abs(decisions[0].reset - (time.time() + 60)) <= 2


async def test_two_limiters_sharing_redis_together_allow_exactly_the_limit(redis_url):
    prefix = unique_prefix()
    first = limiter_for(redis_url, limit=50, prefix=prefix)
    second = limiter_for(redis_url, limit=50, prefix=prefix)
    try:
        decisions = await asyncio.gather(
            *(limiter.hit("203.0.113.7") for _ in range(40) for limiter in (first, second))
        )
    finally:
        await first.aclose()
        await second.aclose()
    assert sum(d.allowed for d in decisions) == 50
    assert sorted(d.remaining for d in decisions if d.allowed) == list(range(50))


async def test_a_burst_larger_than_the_connection_pool_waits_for_redis_rather_than_falling_back(
    redis_url, caplog
):
    limiter = limiter_for(redis_url, limit=300, max_connections=4)
    try:
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            decisions = await asyncio.gather(*(limiter.hit("203.0.113.7") for _ in range(200)))
    finally:
        await limiter.aclose()
    assert limiter.is_shared and not [r for r in caplog.records if r.name == LOGGER]
    assert sorted(d.remaining for d in decisions) == list(range(100, 300))


async def test_each_client_is_one_sorted_set_that_expires_with_the_window(redis_url):
    limiter = limiter_for(redis_url, limit=3)
    try:
        for _ in range(5):
            await limiter.hit("2001:db8:1:2::/64")
        key = limiter.prefix + "2001:db8:1:2::/64"
        assert await limiter.client.type(key) == b"zset"
        assert await limiter.client.zcard(key) == 3
        assert 0 < await limiter.client.pttl(key) <= 60_000
        assert await limiter.client.keys(limiter.prefix + "*") == [key.encode()]
    finally:
        await limiter.aclose()


async def test_the_window_slides(redis_url):
    limiter = limiter_for(redis_url, limit=2, window=1.0)
    try:
        assert (await limiter.hit("a")).allowed
        await asyncio.sleep(0.5)
        assert (await limiter.hit("a")).allowed
        assert not (await limiter.hit("a")).allowed
        await asyncio.sleep(0.6)  # the first request has left the window, the second has not
        assert (await limiter.hit("a")).allowed
        assert not (await limiter.hit("a")).allowed
    finally:
        await limiter.aclose()


async def test_peek_does_not_count(redis_url):
    limiter = limiter_for(redis_url, limit=2)
    try:
        await limiter.hit("a")
        assert (await limiter.peek("a")).remaining == 1
        assert (await limiter.peek("a")).remaining == 1
        assert (await limiter.peek("b")).remaining == 2
        assert not await limiter.client.exists(limiter.prefix + "b")
    finally:
        await limiter.aclose()


async def test_a_client_passed_in_stays_open_for_its_owner(redis_url):
    client = Redis.from_url(redis_url[0])
    limiter = limiter_for(redis_url, limit=2)
    await limiter.aclose()
    shared = RedisRateLimiter(client, prefix=limiter.prefix)
    await shared.hit("a")
    await shared.aclose()
    assert await client.ping()
    await client.aclose()


async def test_unreachable_redis_limits_per_process_and_logs_once(caplog):
    url = f"redis://:secret-password@127.0.0.1:{free_port()}/0"
    limiter = RedisRateLimiter(url, limit=2, retry_interval=0)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        decisions = [await limiter.hit("a") for _ in range(5)]
    await limiter.aclose()
    assert [d.allowed for d in decisions] == [True, True, False, False, False]
    assert not limiter.is_shared
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert "count per process" in record.getMessage()
    assert "secret-password" not in record.getMessage()


async def test_redis_going_away_and_coming_back(tmp_path, caplog):
    port = free_port()
    clock = Clock()
    limiter = RedisRateLimiter(f"redis://127.0.0.1:{port}/0", limit=3, retry_interval=5, clock=clock)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        with redis_server(port, tmp_path):
            assert (await limiter.hit("a")).remaining == 2
        # Redis is gone: the API keeps answering, limits in this process, and says so once.
        assert (await limiter.hit("a")).remaining == 2
        assert (await limiter.hit("a")).remaining == 1
        assert not limiter.is_shared
        with redis_server(port, tmp_path):
            # Within the retry interval the process keeps counting alone, without knocking on Redis.
            assert (await limiter.hit("a")).remaining == 0 and not limiter.is_shared
            clock.now += 5
            back = await limiter.hit("a")
            assert limiter.is_shared
            assert back.remaining == 2  # a fresh Redis (nothing saved) holds only this request
            await limiter.aclose()
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(messages) == 2
    assert "does not answer" in messages[0] and "answers again" in messages[1]


async def test_a_redis_that_lost_the_script_is_given_it_again(tmp_path):
    port = free_port()
    with redis_server(port, tmp_path):
        limiter = RedisRateLimiter(f"redis://127.0.0.1:{port}/0", limit=3)
        await limiter.hit("a")
        await limiter.client.script_flush()
        assert (await limiter.hit("a")).remaining == 1
        assert limiter.is_shared
        await limiter.aclose()
