"""The limiter contract: one `hit` per request, answered with a decision and its headers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

DEFAULT_LIMIT = 120
DEFAULT_WINDOW = 60.0


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset: int          # Unix epoch seconds when the window frees a place
    retry_after: int    # seconds to wait; 0 when allowed

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }


class RateLimiter(Protocol):
    limit: int

    async def hit(self, key: str) -> RateDecision:
        """Count one request for `key` (when there is room) and say whether it may proceed."""
        ...

    async def peek(self, key: str) -> RateDecision:
        """The state for `key` without counting a request."""
        ...
