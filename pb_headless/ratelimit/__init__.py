"""Rate limiting: a sliding window per client, in memory or shared through Redis.

A limiter answers `hit(key)` with a `RateDecision`; `HeadlessAPI` turns the decision into the
`X-RateLimit-*` headers of every answer and, when it refuses, a 429. `RedisRateLimiter` needs the
`redis` package (the `pb_headless[redis]` extra), so it is imported only when asked for.
"""

from typing import Any

from pb_headless.ratelimit.base import DEFAULT_LIMIT, DEFAULT_WINDOW, RateDecision, RateLimiter
from pb_headless.ratelimit.memory import MemoryRateLimiter

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_WINDOW",
    "MemoryRateLimiter",
    "RateDecision",
    "RateLimiter",
    "RedisRateLimiter",
]


def __getattr__(name: str) -> Any:
    if name == "RedisRateLimiter":
        from pb_headless.ratelimit.redis import RedisRateLimiter

        return RedisRateLimiter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
