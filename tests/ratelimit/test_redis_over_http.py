"""Two API instances sharing a private Redis that goes away and comes back, seen through HTTP: while
it is away each instance limits on its own and keeps answering; once it is back (after the retry
interval) the two count one client together again. docs/cors-and-rate-limits.md, "If Redis goes away"."""

import logging

from pb_headless.ratelimit.redis import RedisRateLimiter
from tests.servers.processes import free_port, redis_server


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def health_statuses(hosts, count: int) -> list[int]:
    """`count` health requests from one client, taking turns between the hosts."""
    return [(await hosts[n % len(hosts)].client.get("/api/pb/v1/health")).status_code for n in range(count)]


async def test_instances_limit_on_their_own_while_redis_is_away_and_together_once_it_is_back(
    sqlite_database, host_factory, tmp_path, caplog
):
    port, clock = free_port(), Clock()
    limiters = [
        RedisRateLimiter(f"redis://127.0.0.1:{port}/0", limit=4, retry_interval=5, clock=clock)
        for _ in range(2)
    ]
    hosts = [await host_factory(sqlite_database, rate_limiter=limiter) for limiter in limiters]
    try:
        with caplog.at_level(logging.WARNING, logger="pb_headless.ratelimit"):
            with redis_server(port, tmp_path):
                shared = await health_statuses(hosts, 6)
            away = await health_statuses(hosts, 10)
            with redis_server(port, tmp_path):
                clock.now += 5
                back = await health_statuses(hosts, 6)
    finally:
        for limiter in limiters:
            await limiter.aclose()
    assert shared == [200] * 4 + [429] * 2
    assert away == [200] * 8 + [429] * 2  # four on each instance: every answer is an answer, never a 500
    assert back == [200] * 4 + [429] * 2
    assert all(limiter.is_shared for limiter in limiters)
    messages = [r.getMessage() for r in caplog.records if r.name == "pb_headless.ratelimit"]
    assert (
        sum("does not answer" in m for m in messages) == 2 and sum("shared again" in m for m in messages) == 2
    )
