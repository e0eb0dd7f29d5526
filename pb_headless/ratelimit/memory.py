"""A sliding-window log per client, in this process's memory."""

from __future__ import annotations

import time
from array import array
from bisect import bisect_right
from collections.abc import Callable

from pb_headless.ratelimit.base import DEFAULT_LIMIT, DEFAULT_WINDOW, RateDecision


class MemoryRateLimiter:
    """Exact sliding window: each client keeps the times of its requests of the last `window` seconds.

    The times live in an `array('d')` (8 bytes each, at most `limit` of them) rather than a deque of
    float objects, which costs about four times as much per tracked client. Limits per process:
    several workers without Redis each allow `limit` (docs/cors-and-rate-limits.md).
    """

    def __init__(
        self,
        limit: int = DEFAULT_LIMIT,
        window: float = DEFAULT_WINDOW,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if limit < 1 or window <= 0:
            raise ValueError("a rate limit needs limit >= 1 and window > 0")
        self.limit = limit
        self.window = window
        self.clock = clock
        self._hits: dict[str, array[float]] = {}
        self._next_sweep = clock() + window

    @property
    def tracked_clients(self) -> int:
        return len(self._hits)

    async def hit(self, key: str) -> RateDecision:
        return self.decide(key, count=True)

    async def peek(self, key: str) -> RateDecision:
        return self.decide(key, count=False)

    def decide(self, key: str, *, count: bool) -> RateDecision:
        now = self.clock()
        start = now - self.window
        hits = self._hits.get(key)
        if hits is not None:
            expired = bisect_right(hits, start)
            if expired:
                del hits[:expired]
        elif count:
            hits = self._hits[key] = array("d")
        held = len(hits) if hits is not None else 0
        allowed = held < self.limit
        if allowed and count and hits is not None:
            hits.append(max(now, hits[-1]) if hits else now)  # stays sorted if the wall clock steps back
            held += 1
        if now >= self._next_sweep:
            self._sweep(now)
        return RateDecision.of_window(
            allowed=allowed,
            limit=self.limit,
            count=held,
            oldest=hits[0] if hits else None,
            now=now,
            window=self.window,
        )

    def _sweep(self, now: float) -> None:
        """Once a window, forget clients idle for a whole window, so memory follows the active ones."""
        start = now - self.window
        for key in [k for k, hits in self._hits.items() if not hits or hits[-1] <= start]:
            del self._hits[key]
        self._next_sweep = now + self.window
