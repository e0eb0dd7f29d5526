"""A sliding-window log per client, in this process's memory."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

from pb_headless.ratelimit.base import DEFAULT_LIMIT, DEFAULT_WINDOW, RateDecision

SWEEP_EVERY = 1024


class MemoryRateLimiter:
    """Exact sliding window: each client keeps the times of its last `limit` requests.

    Limits per process: several workers without Redis each allow `limit` (docs/deployment.md).
    """

    def __init__(self, limit: int = DEFAULT_LIMIT, window: float = DEFAULT_WINDOW,
                 clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._calls = 0

    async def hit(self, key: str) -> RateDecision:
        return self._decide(key, count=True)

    async def peek(self, key: str) -> RateDecision:
        return self._decide(key, count=False)

    def _decide(self, key: str, *, count: bool) -> RateDecision:
        now = self.clock()
        hits = self._hits.get(key)
        if hits is None:
            hits = self._hits[key] = deque()
        start = now - self.window
        while hits and hits[0] <= start:
            hits.popleft()
        allowed = len(hits) < self.limit
        if allowed and count:
            hits.append(now)
        self._maybe_sweep(start)
        oldest = hits[0] if hits else now
        reset = math.ceil(oldest + self.window)
        return RateDecision(
            allowed=allowed, limit=self.limit, remaining=max(self.limit - len(hits), 0), reset=reset,
            retry_after=0 if allowed else max(math.ceil(oldest + self.window - now), 1),
        )

    def _maybe_sweep(self, start: float) -> None:
        """Forget idle clients now and then, so memory follows the active clients only."""
        self._calls += 1
        if self._calls % SWEEP_EVERY:
            return
        for key in [k for k, hits in self._hits.items() if not hits or hits[-1] <= start]:
            del self._hits[key]
