"""Kept counts: one count per key and data version, however many requests ask at once."""

from __future__ import annotations

import asyncio

import pytest

from pb_headless.database import totals
from pb_headless.database.totals import Totals


class SlowCount:
    def __init__(self, result: int) -> None:
        self.result, self.calls, self.release = result, 0, asyncio.Event()

    async def __call__(self) -> int:
        self.calls += 1
        await self.release.wait()
        return self.result


async def test_requests_asking_for_the_same_count_at_once_share_one_count() -> None:
    kept, count = Totals(), SlowCount(42)
    waiting = [asyncio.create_task(kept.total("k", 1, count)) for _ in range(16)]
    await asyncio.sleep(0)
    count.release.set()
    assert await asyncio.gather(*waiting) == [42] * 16
    assert count.calls == 1


async def test_a_new_data_version_counts_again_and_no_version_always_counts() -> None:
    kept, count = Totals(), SlowCount(7)
    count.release.set()
    assert [await kept.total("k", 1, count), await kept.total("k", 1, count)] == [7, 7]
    assert count.calls == 1
    count.result = 8
    assert await kept.total("k", 2, count) == 8
    assert await kept.total("k", None, count) == 8
    assert count.calls == 3


async def test_past_the_time_bound_a_recount_runs_in_the_background_while_requests_keep_the_last_total(
    monkeypatch,
) -> None:
    kept, count = Totals(), SlowCount(5)
    count.release.set()
    await kept.total("k", 1, count)
    monkeypatch.setattr(totals, "STALE_AFTER", 0.0)
    monkeypatch.setattr(totals, "RECOUNT_FACTOR", 0.0)
    count.result, count.release = 6, asyncio.Event()
    assert await kept.total("k", 1, count) == 5  # starts the recount, does not wait for it
    assert await kept.total("k", 1, count) == 5  # one recount at a time
    count.release.set()
    await kept.settled()
    assert await kept.total("k", 1, count) == 6
    await kept.settled()
    assert count.calls == 3


async def test_a_failed_count_reaches_every_request_waiting_for_it() -> None:
    kept = Totals()
    started = asyncio.Event()

    async def failing() -> int:
        started.set()
        await asyncio.sleep(0)
        raise RuntimeError("database gone")

    first = asyncio.create_task(kept.total("k", 1, failing))
    await started.wait()
    second = asyncio.create_task(kept.total("k", 1, failing))
    for task in (first, second):
        with pytest.raises(RuntimeError, match="database gone"):
            await task


async def test_a_request_sharing_a_count_whose_counter_was_cut_off_counts_itself() -> None:
    kept, count = Totals(), SlowCount(42)
    counter = asyncio.create_task(kept.total("k", 1, count))
    await asyncio.sleep(0)
    sharer = asyncio.create_task(kept.total("k", 1, count))
    await asyncio.sleep(0)
    counter.cancel()  # the first request's time limit passed (or its client left)
    await asyncio.sleep(0)
    count.release.set()
    assert await sharer == 42  # its own count, not the other request's cancel
    assert counter.cancelled() and count.calls == 2


async def test_counts_of_long_statements_are_bounded_in_bytes_and_the_newest_stays() -> None:
    """A key holds its count's SQL and values; on PostgreSQL a 100-value `in` list makes it kilobytes."""
    kept, count = Totals(), SlowCount(5)
    count.release.set()
    sql = "SELECT count(*) FROM t WHERE v IN (" + ", ".join(f"CAST(${n} AS BIGINT)" for n in range(100)) + ")"
    keys = [(sql + f" -- {n}", tuple(range(100))) for n in range(1000)]
    for key in keys:
        assert await kept.total(key, 1, count) == 5
    assert kept.bytes <= totals.KEPT_COUNT_BYTES
    assert 0 < kept.size() < 1000 and kept.kept_keys()[-1] == keys[-1]
    assert kept.bytes == sum(totals.key_bytes(key) for key in kept.kept_keys())
    assert await kept.total(keys[-1], 1, count) == 5 and count.calls == 1000  # still kept: no recount
