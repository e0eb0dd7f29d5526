"""pb_headless/ratelimit/redis.py's fallback logic, with a stand-in for the Redis client: when Redis
fails the process counts on its own, probes Redis once per retry interval (one request at a time),
and goes back to the shared count when a probe succeeds. The same against real Redis servers:
tests/ratelimit/test_redis_server.py."""

import asyncio
import logging
from typing import ClassVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pb_headless.ratelimit.redis import RedisRateLimiter

LOGGER = "pb_headless.ratelimit"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Pool:
    connection_kwargs: ClassVar[dict[str, object]] = {
        "host": "redis.internal",
        "port": 6379,
        "db": 0,
        "password": "secret",
    }


class FakeRedis:
    """Answers the sliding-window script as Redis would for a limit never reached (held = calls so
    far), fails with `failure` while it is set, and lets a call hang until `release` is set."""

    connection_pool = Pool()

    def __init__(self) -> None:
        self.failure: Exception | None = None
        self.calls = 0
        self.release: asyncio.Event | None = None

    def register_script(self, source: str):
        async def script(keys, args):
            self.calls += 1
            if self.release is not None:
                await self.release.wait()
            if self.failure is not None:
                raise self.failure
            return [1, self.calls, 1_700_000_000_000_000, "1700000000000000"]

        return script


def limiter_with(redis: FakeRedis, clock: Clock, **options) -> RedisRateLimiter:
    return RedisRateLimiter(redis, limit=3, retry_interval=5, clock=clock, **options)  # type: ignore[arg-type]


async def test_a_failing_redis_makes_the_process_count_alone_and_say_so_once(caplog):
    redis, clock = FakeRedis(), Clock()
    limiter = limiter_with(redis, clock)
    redis.failure = RedisConnectionError("Connection refused")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        decisions = [await limiter.hit("a") for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert not limiter.is_shared
    assert redis.calls == 1  # within the retry interval Redis is not asked again
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert "redis.internal:6379/0" in record.getMessage() and "secret" not in record.getMessage()


async def test_after_the_retry_interval_one_request_probes_and_the_count_is_shared_again(caplog):
    redis, clock = FakeRedis(), Clock()
    limiter = limiter_with(redis, clock)
    redis.failure = RedisTimeoutError("Timeout reading from socket")
    await limiter.hit("a")
    redis.failure = None
    clock.now = 4.9
    await limiter.hit("a")
    assert redis.calls == 1 and not limiter.is_shared
    clock.now = 5.0
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        back = await limiter.hit("a")
    assert limiter.is_shared and redis.calls == 2
    assert back.remaining == 1  # Redis's count (its second call), not the process's three
    assert "shared again" in caplog.records[-1].getMessage()


async def test_while_a_probe_waits_on_redis_other_requests_count_in_memory_without_waiting():
    redis, clock = FakeRedis(), Clock()
    limiter = limiter_with(redis, clock)
    redis.failure = RedisTimeoutError("Timeout reading from socket")
    await limiter.hit("a")
    clock.now = 5.0
    redis.release = asyncio.Event()  # the next call to Redis hangs, as a frozen Redis would
    probe = asyncio.create_task(limiter.hit("a"))
    await asyncio.sleep(0)
    others = [await asyncio.wait_for(limiter.hit("b"), timeout=1) for _ in range(3)]
    assert redis.calls == 2 and not probe.done()
    assert [d.remaining for d in others] == [2, 1, 0]
    redis.release.set()
    assert (await probe).allowed and not limiter.is_shared  # the probe failed: still counting alone
    assert redis.calls == 2


async def test_a_reply_that_is_not_the_scripts_counts_as_redis_being_away():
    class Stranger(FakeRedis):
        def register_script(self, source: str):
            async def script(keys, args):
                return "+OK"

            return script

    limiter = limiter_with(Stranger(), Clock())
    assert (await limiter.hit("a")).remaining == 2
    assert not limiter.is_shared
