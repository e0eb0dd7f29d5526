"""Rate limiting: a sliding window per client, in memory or shared through Redis.

A limiter answers `hit(key)` with a `RateDecision`; `HeadlessAPI` turns the decision into the
`X-RateLimit-*` headers of every answer and, when it refuses, a 429.
"""

from pb_headless.ratelimit.base import DEFAULT_LIMIT, DEFAULT_WINDOW, RateDecision, RateLimiter
from pb_headless.ratelimit.memory import MemoryRateLimiter

__all__ = ["DEFAULT_LIMIT", "DEFAULT_WINDOW", "MemoryRateLimiter", "RateDecision", "RateLimiter"]
