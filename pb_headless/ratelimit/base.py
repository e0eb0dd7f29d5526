"""The limiter contract: one `hit` per request, answered with a decision and its headers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

DEFAULT_LIMIT = 120
DEFAULT_WINDOW = 60.0


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset: int  # Unix epoch seconds when the window frees a place
    retry_after: int  # seconds to wait; 0 when allowed

    @classmethod
    def of_window(
        cls, *, allowed: bool, limit: int, count: int, oldest: float | None, now: float, window: float
    ) -> RateDecision:
        """The decision for a sliding window holding `count` requests, the oldest at `oldest`
        (epoch seconds): a place frees when that request leaves the window."""
        frees_at = (now if oldest is None else oldest) + window
        remaining = limit - count if count < limit else 0
        if allowed:  # every request but a refused one: positional, and no second ceiling
            return cls(True, limit, remaining, math.ceil(frees_at), 0)
        return cls(False, limit, remaining, math.ceil(frees_at), max(math.ceil(frees_at - now), 1))

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """`headers()` as ASGI carries them (lower-case names, bytes): what every answer adds."""
        return [
            (b"x-ratelimit-limit", b"%d" % self.limit),
            (b"x-ratelimit-remaining", b"%d" % self.remaining),
            (b"x-ratelimit-reset", b"%d" % self.reset),
        ]


class RateLimiter(Protocol):
    """What `HeadlessAPI(rate_limiter=...)` accepts; `key` is the client's bucket (`proxies.rate_key`)."""

    limit: int

    async def hit(self, key: str) -> RateDecision:
        """Count one request for `key` (when there is room) and say whether it may proceed."""
        ...

    async def peek(self, key: str) -> RateDecision:
        """The state for `key` without counting a request (OPTIONS answers show it)."""
        ...
