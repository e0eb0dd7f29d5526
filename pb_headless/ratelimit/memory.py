"""A sliding-window log per client, in this process's memory."""

from __future__ import annotations

import time
from array import array
from bisect import bisect_right
from collections.abc import Callable

from pb_headless.ratelimit.base import DEFAULT_LIMIT, DEFAULT_WINDOW, RateDecision


class MemoryRateLimiter:
    """Exact sliding window: each client keeps the times of its requests of the last `window` seconds.

    The times live in an `array('d')` (8 bytes each, at most `limit` of them, plus expired ones not
    yet dropped) rather than a deque of float objects, which costs about four times as much per
    tracked client. Expired times are passed over by an index and dropped in one cut once they are
    at least half of the array: deleting from an array's front moves all the rest, which under a high
    limit (hundreds of thousands of times per client) cost more than the rest of a request each time.
    Limits per process: several workers without Redis each allow `limit`
    (docs/cors-and-rate-limits.md).
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
        self._hits: dict[str, _Log] = {}
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
        log = self._hits.get(key)
        if log is not None:
            times = log.times
            first = bisect_right(times, start, log.first)
            if first != log.first:
                if first * 2 >= len(times):  # the expired are half or more: drop them in one cut
                    del times[:first]
                    first = 0
                log.first = first
        elif count:
            log = self._hits[key] = _Log()
        held = len(log.times) - log.first if log is not None else 0
        allowed = held < self.limit
        if allowed and count and log is not None:
            times = log.times
            times.append(max(now, times[-1]) if times else now)  # stays sorted if the wall clock steps back
            held += 1
        if now >= self._next_sweep:
            self._sweep(now)
        return RateDecision.of_window(
            allowed=allowed,
            limit=self.limit,
            count=held,
            oldest=log.times[log.first] if log is not None and held else None,
            now=now,
            window=self.window,
        )

    def _sweep(self, now: float) -> None:
        """Once a window, forget clients idle for a whole window, so memory follows the active ones."""
        start = now - self.window
        for key in [k for k, log in self._hits.items() if not log.times or log.times[-1] <= start]:
            del self._hits[key]
        self._next_sweep = now + self.window


class _Log:
    """One client's request times, sorted; those before `first` have expired."""

    __slots__ = ("first", "times")

    def __init__(self) -> None:
        self.times: array[float] = array("d")
        self.first = 0
