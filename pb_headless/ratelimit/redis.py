"""A sliding window shared by every worker and instance through Redis, with a per-process fallback.

Each client is one sorted set of request times; one Lua script trims it to the window, counts it and
adds the request, atomically, so any number of processes sharing one Redis together allow exactly
`limit` requests per window. Times come from Redis's own clock, so instances with skewed clocks
still agree. When Redis does not answer, the API keeps answering and limits per process (logged
once), trying Redis again every `retry_interval` seconds and going back to it when it returns.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from pb_headless.ratelimit.base import DEFAULT_LIMIT, DEFAULT_WINDOW, RateDecision
from pb_headless.ratelimit.memory import MemoryRateLimiter

log = logging.getLogger("pb_headless.ratelimit")

DEFAULT_PREFIX = "pb_headless:rate:"

# KEYS[1]: the client's sorted set, scores are request times in µs of the Redis clock.
# ARGV: limit, window in µs, a member unique to this request, 1 to count the request (0 to peek).
# Returns {allowed, requests held, now µs, oldest held µs or nil}.
SLIDING_WINDOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local held = redis.call('ZCARD', KEYS[1])
local allowed = 0
if held < limit then
  allowed = 1
  if ARGV[4] == '1' then
    redis.call('ZADD', KEYS[1], now, ARGV[3])
    redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
    held = held + 1
  end
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
return {allowed, held, now, oldest or false}
"""


class RedisRateLimiter:
    """`RedisRateLimiter("redis://host:6379/0", limit=120, prefix="site:")`, or an existing
    `redis.asyncio.Redis` client (then closing it stays the caller's business)."""

    def __init__(
        self,
        redis: str | Redis,
        *,
        limit: int = DEFAULT_LIMIT,
        window: float = DEFAULT_WINDOW,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = 0.5,
        retry_interval: float = 5.0,
        max_connections: int = 50,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(redis, str):
            # Short timeouts and a single immediate retry: while Redis is away a request may wait
            # for it at most once per retry_interval, never for a backoff schedule. A burst of
            # concurrent requests queues for a connection instead of failing over to memory.
            redis = Redis.from_pool(
                BlockingConnectionPool.from_url(
                    redis,
                    max_connections=max_connections,
                    timeout=timeout,
                    socket_connect_timeout=timeout,
                    socket_timeout=timeout,
                    retry=Retry(NoBackoff(), 1),
                )
            )
            self._owns_client = True
        else:
            self._owns_client = False
        self.client = redis
        self.limit = limit
        self.window = window
        self.prefix = prefix
        self.retry_interval = retry_interval
        self.clock = clock
        self.fallback = MemoryRateLimiter(limit, window)
        self._script = redis.register_script(SLIDING_WINDOW)
        self._window_us = round(window * 1_000_000)
        self._member_prefix = secrets.token_hex(4) + ":"  # unique per limiter, so members never collide
        self._counter = itertools.count()
        self._shared = True
        self._retry_at = 0.0

    @property
    def is_shared(self) -> bool:
        """False while Redis is away and this process counts on its own."""
        return self._shared

    @property
    def location(self) -> str:
        """Where Redis is, without credentials, for log lines."""
        kwargs = self.client.connection_pool.connection_kwargs
        if "path" in kwargs:
            return f"unix:{kwargs['path']}"
        return f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{kwargs.get('db', 0)}"

    async def hit(self, key: str) -> RateDecision:
        return await self._decide(key, count=True)

    async def peek(self, key: str) -> RateDecision:
        return await self._decide(key, count=False)

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    async def _decide(self, key: str, *, count: bool) -> RateDecision:
        if not self._shared:
            if self.clock() < self._retry_at:
                return self.fallback.decide(key, count=count)
            # This request probes Redis; the requests arriving meanwhile keep counting in memory
            # instead of all waiting on a Redis that may still be away (or frozen).
            self._retry_at = self.clock() + self.retry_interval
        member = f"{self._member_prefix}{next(self._counter):x}"
        try:
            reply = await self._script(
                keys=[self.prefix + key], args=[self.limit, self._window_us, member, int(count)]
            )
            decision = self._decision(reply)
        # OSError: sockets and timeouts redis-py lets through; ValueError/TypeError: a reply that is not
        # the script's (a proxy in between, another server on the port).
        except (RedisError, OSError, ValueError, TypeError) as error:
            self._lost(error)
            return self.fallback.decide(key, count=count)
        if not self._shared:
            self._shared = True
            log.warning("pb_headless: Redis at %s answers again; rate limits are shared again", self.location)
        return decision

    def _decision(self, reply: list[Any]) -> RateDecision:
        allowed, held, now_us, oldest_us = reply
        return RateDecision.of_window(
            allowed=bool(allowed),
            limit=self.limit,
            count=int(held),
            now=int(now_us) / 1_000_000,
            oldest=float(oldest_us) / 1_000_000 if oldest_us is not None else None,
            window=self.window,
        )

    def _lost(self, error: Exception) -> None:
        self._retry_at = self.clock() + self.retry_interval
        if self._shared:
            self._shared = False
            log.warning(
                "pb_headless: Redis at %s does not answer (%s: %s); rate limits count per process "
                "until it is back",
                self.location,
                type(error).__name__,
                error,
            )
