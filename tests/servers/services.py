"""The shared Redis of the test machine: reachable or skipped (failed under PB_REQUIRE_SERVICES=1)."""

from __future__ import annotations

import os
import uuid

import pytest
from redis.asyncio import Redis

REDIS_URL = os.environ.get("PB_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def unavailable(service: str, reason: str) -> None:
    """Skip with the reason, or fail when PB_REQUIRE_SERVICES=1 (CI) says the service must be there."""
    message = f"{service} is not available: {reason}"
    if os.environ.get("PB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{message} (PB_REQUIRE_SERVICES=1 makes it required)")
    pytest.skip(message)


async def shared_redis() -> str:
    """The URL of the shared Redis, after making sure it answers."""
    client = Redis.from_url(REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
    try:
        await client.ping()
    except Exception as error:
        unavailable("Redis", f"{REDIS_URL} does not answer: {type(error).__name__}: {error}")
    finally:
        await client.aclose()
    return REDIS_URL


def unique_prefix() -> str:
    """A key prefix of this test alone, so parallel runs on one Redis never see each other's counts."""
    return f"pbtest:{os.getpid()}:{uuid.uuid4().hex[:10]}:"


async def forget(url: str, prefix: str) -> None:
    """Delete every key a test wrote under its prefix."""
    client = Redis.from_url(url)
    try:
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()
