"""pb_headless/ratelimit/memory.py: the exact sliding window of one process."""

import math

import pytest

from pb_headless.ratelimit import MemoryRateLimiter, RateDecision


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_the_limit_is_allowed_and_the_next_request_is_refused():
    limiter = MemoryRateLimiter(limit=120, clock=Clock())
    decisions = [await limiter.hit("a") for _ in range(121)]
    assert all(d.allowed for d in decisions[:120])
    assert [d.remaining for d in decisions[:3]] == [119, 118, 117]
    assert decisions[119].remaining == 0
    assert not decisions[120].allowed and decisions[120].remaining == 0


async def test_clients_are_counted_apart():
    limiter = MemoryRateLimiter(limit=1, clock=Clock())
    assert (await limiter.hit("a")).allowed
    assert (await limiter.hit("b")).allowed
    assert not (await limiter.hit("a")).allowed


async def test_the_window_slides_one_request_at_a_time():
    clock = Clock()
    limiter = MemoryRateLimiter(limit=3, window=60, clock=clock)
    for offset in (0, 20, 40):
        clock.now = 1_000_000 + offset
        await limiter.hit("a")
    clock.now = 1_000_059.9
    assert not (await limiter.hit("a")).allowed
    clock.now = 1_000_060  # the first request leaves the window: exactly one place frees
    assert (await limiter.hit("a")).allowed
    assert not (await limiter.hit("a")).allowed
    clock.now = 1_000_080
    assert (await limiter.hit("a")).allowed


async def test_no_fixed_window_boundary_lets_a_burst_double_the_limit():
    clock = Clock(1_000_019.0)
    limiter = MemoryRateLimiter(limit=3, window=60, clock=clock)
    assert all([(await limiter.hit("a")).allowed for _ in range(3)])
    clock.now = 1_000_021.0  # past a whole minute (1_000_020 = 60 × 16667), where a fixed window restarts
    assert not (await limiter.hit("a")).allowed


async def test_refused_requests_do_not_count():
    clock = Clock()
    limiter = MemoryRateLimiter(limit=2, window=60, clock=clock)
    await limiter.hit("a")
    await limiter.hit("a")
    for _ in range(50):
        await limiter.hit("a")
    clock.now += 60
    assert (await limiter.hit("a")).remaining == 1


async def test_reset_and_retry_after_say_when_the_oldest_request_leaves():
    clock = Clock(1_000_000.25)
    limiter = MemoryRateLimiter(limit=2, window=60, clock=clock)
    first = await limiter.hit("a")
    assert first.reset == 1_000_061  # 1_000_060.25, rounded up to a whole second
    clock.now = 1_000_010.0
    await limiter.hit("a")
    refused = await limiter.hit("a")
    assert refused == RateDecision(allowed=False, limit=2, remaining=0, reset=1_000_061, retry_after=51)


async def test_retry_after_is_at_least_one_second():
    clock = Clock(1_000_000.0)
    limiter = MemoryRateLimiter(limit=1, window=60, clock=clock)
    await limiter.hit("a")
    clock.now = 1_000_059.999
    assert (await limiter.hit("a")).retry_after == 1


async def test_peek_shows_the_state_without_counting():
    limiter = MemoryRateLimiter(limit=2, clock=Clock())
    await limiter.hit("a")
    assert (await limiter.peek("a")).remaining == 1
    assert (await limiter.peek("a")).remaining == 1
    assert (await limiter.peek("never-seen")).remaining == 2
    assert limiter.tracked_clients == 1


async def test_headers_name_limit_remaining_and_reset():
    decision = await MemoryRateLimiter(limit=5, clock=Clock(100.0)).hit("a")
    assert decision.headers() == {
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": "4",
        "X-RateLimit-Reset": "160",
    }


async def test_idle_clients_are_forgotten_once_a_window():
    clock = Clock()
    limiter = MemoryRateLimiter(limit=5, window=60, clock=clock)
    for number in range(100):
        await limiter.hit(f"client-{number}")
    assert limiter.tracked_clients == 100
    clock.now += 61
    await limiter.hit("late")
    assert limiter.tracked_clients == 1


async def test_a_clock_stepping_back_does_not_break_the_window():
    clock = Clock(1_000_000.0)
    limiter = MemoryRateLimiter(limit=3, window=60, clock=clock)
    await limiter.hit("a")
    clock.now = 999_990.0
    await limiter.hit("a")
    await limiter.hit("a")
    assert not (await limiter.hit("a")).allowed
    clock.now = 1_000_060.0
    assert (await limiter.peek("a")).remaining == 3


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError):
        MemoryRateLimiter(limit=0)


async def test_a_busy_client_under_a_high_limit_is_counted_exactly_as_its_times_expire():
    """Expired times are passed over and dropped in cuts (pb_headless/ratelimit/memory.py): whatever the
    cut, the count, the reset and the refusal follow the requests of the last window exactly."""
    clock = Clock()
    limiter = MemoryRateLimiter(limit=1_000, window=10, clock=clock)
    sent: list[float] = []
    for step in range(3_000):  # a request every 10 ms for 30 s: three windows
        clock.now = 1_000_000 + step / 100
        decision = await limiter.hit("a")
        sent.append(clock.now)
        in_window = [t for t in sent if t > clock.now - 10]
        assert decision.allowed
        assert decision.remaining == 1_000 - len(in_window)
        assert decision.reset == math.ceil(in_window[0] + 10)
    clock.now += 5  # half the window later, without a request
    peeked = await limiter.peek("a")
    assert peeked.remaining == 1_000 - len([t for t in sent if t > clock.now - 10])
    busy = MemoryRateLimiter(limit=5, window=10, clock=clock)
    for _ in range(5):
        assert (await busy.hit("b")).allowed
    assert not (await busy.hit("b")).allowed
    clock.now += 10  # all five leave at once
    assert (await busy.hit("b")).remaining == 4
