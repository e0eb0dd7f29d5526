"""What the rate limiter costs per request: µs per hit and bytes per tracked client, memory and Redis.

    .venv/bin/python bench/ratelimit.py [--redis redis://127.0.0.1:6379/0]

Time is measured with time.perf_counter over many hits; process memory with tracemalloc (what stays
allocated per tracked client); Redis memory with MEMORY USAGE per key and INFO used_memory overall.
Redis keys are written under a prefix of their own and deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import time
import tracemalloc
import uuid

from pb_headless.proxies import rate_key
from pb_headless.ratelimit import MemoryRateLimiter

LIMIT = 120


def clients(count: int) -> list[str]:
    """Rate keys as the API makes them, from a realistic mix of IPv4 and IPv6 addresses."""
    keys = []
    for number in range(count):
        if number % 4:
            keys.append(rate_key(f"10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}"))
        else:
            keys.append(rate_key(f"2001:db8:{number >> 16:x}:{number & 0xFFFF:x}::1"))
    return keys


async def time_hits(make_limiter, keys: list[str], hits_per_key: int, runs: int = 3) -> float:
    """µs per hit, the keys taking turns (the way concurrent clients arrive); the best of `runs`
    fresh limiters, since a shared machine only ever adds time."""
    best = float("inf")
    for _ in range(runs):
        limiter = make_limiter()
        await limiter.hit("warm-up")
        start = time.perf_counter()
        for _ in range(hits_per_key):
            for key in keys:
                await limiter.hit(key)
        best = min(best, (time.perf_counter() - start) / (len(keys) * hits_per_key) * 1e6)
        if hasattr(limiter, "aclose"):
            await limiter.aclose()
    return best


async def bytes_per_client(limiter, count: int, hits_per_key: int) -> float:
    """What stays allocated per new client, after a warm-up hit (connections, script) on another key."""
    await limiter.hit("warm-up")
    keys = clients(count)  # a request has its key anyway; count only what the limiter keeps
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(hits_per_key):
        for key in keys:
            await limiter.hit(key)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / count


async def memory_figures() -> None:
    print(f"memory limiter (exact sliding window, limit {LIMIT}/min)")
    per_hit = await time_hits(lambda: MemoryRateLimiter(LIMIT), clients(2_000), 60)
    print(f"  time per hit, 2,000 clients x 60 hits:           {per_hit:8.2f} µs")
    per_hit = await time_hits(lambda: MemoryRateLimiter(LIMIT), clients(50), 400)  # 280 of 400 refused
    print(f"  time per hit, 50 clients over the limit:         {per_hit:8.2f} µs")
    one = await bytes_per_client(MemoryRateLimiter(LIMIT), 20_000, 1)
    full = await bytes_per_client(MemoryRateLimiter(LIMIT), 2_000, LIMIT)
    print(f"  process memory per tracked client, 1 request:    {one:8.0f} bytes")
    print(f"  process memory per tracked client, {LIMIT} requests: {full:8.0f} bytes")
    print("  (idle clients are forgotten once a window)")


async def redis_figures(url: str) -> None:
    from redis.asyncio import Redis

    from pb_headless.ratelimit.redis import RedisRateLimiter

    prefix = f"pbbench:{os.getpid()}:{uuid.uuid4().hex[:8]}:"
    admin = Redis.from_url(url, socket_connect_timeout=1)
    try:
        await admin.ping()
    except Exception as error:
        print(f"redis limiter: {url} does not answer ({type(error).__name__}); skipped")
        await admin.aclose()
        return
    limiter = RedisRateLimiter(url, limit=LIMIT, prefix=prefix)
    try:
        print(f"redis limiter (one Lua script per hit, EVALSHA; server {url})")
        calls_before = await script_stats(admin)
        per_hit = await time_hits(lambda: RedisRateLimiter(url, limit=LIMIT, prefix=prefix), clients(200), 10)
        calls_after = await script_stats(admin)
        print(f"  time per hit, sequential round trips:            {per_hit:8.2f} µs")
        server = (calls_after[1] - calls_before[1]) / max(calls_after[0] - calls_before[0], 1)
        print(f"  Redis CPU per hit (INFO commandstats):           {server:8.2f} µs")
        keys = clients(200)
        start = time.perf_counter()
        for _ in range(20):
            await asyncio.gather(*(limiter.hit(key) for key in keys))
        concurrent = (time.perf_counter() - start) / (20 * len(keys)) * 1e6
        print(f"  time per hit, 200 concurrent requests:           {concurrent:8.2f} µs")
        fresh = clients(1_001)[-1]
        await limiter.hit(fresh)
        one = await admin.memory_usage(prefix + fresh)
        for _ in range(LIMIT):
            await limiter.hit(keys[0])
        full = await admin.memory_usage(prefix + keys[0])
        print(f"  Redis memory per tracked client, 1 request:      {one:8d} bytes")
        print(f"  Redis memory per tracked client, {LIMIT} requests: {full:8d} bytes")
        process = await bytes_per_client(limiter, 1_000, 3)
        print(f"  process memory per tracked client:               {process:8.0f} bytes (kept in Redis)")
        print("  (a key expires one window after its last request)")
    finally:
        await limiter.aclose()
        stale = [key async for key in admin.scan_iter(match=prefix + "*", count=1000)]
        for start_at in range(0, len(stale), 1000):
            await admin.delete(*stale[start_at : start_at + 1000])
        await admin.aclose()


async def script_stats(admin) -> tuple[int, int]:
    """(calls, µs) of EVALSHA so far on the server; other clients running scripts blur it a little."""
    stats = (await admin.info("commandstats")).get("cmdstat_evalsha", {})
    return int(stats.get("calls", 0)), int(stats.get("usec", 0))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default=os.environ.get("PB_REDIS_URL", "redis://127.0.0.1:6379/0"))
    arguments = parser.parse_args()
    await memory_figures()
    print()
    await redis_figures(arguments.redis)


if __name__ == "__main__":
    asyncio.run(main())
