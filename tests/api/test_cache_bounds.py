"""No cache of a process grows without bound (issue 26.3; docs/performance.md, "What a process keeps").

Any read token can send new statement shapes: every subset of `fields=` times every length of an
`in` list compiles to new SQL. 15,000 distinct shapes once took a process from 63 to 231 MB, kept
when idle. Now every cache has a bound: the caches stay at theirs, and RSS stays within a few MB.
"""

from __future__ import annotations

import itertools
import os
import sys

import pytest

from pb_headless.constructor import ApiTab, ConstructorField, ConstructorTable
from pb_headless.database import caches, totals
from tests.support.constructor import constructor_host

NAMES = ("title", "lead", "rubric", "rank", "score", "views")
NOTES = ConstructorTable(
    "notes",
    "Notes",
    (
        ConstructorField("title", "string", length=100),
        ConstructorField("lead", "string", length=100),
        ConstructorField("rubric", "string", length=20),
        ConstructorField("rank", "integer"),
        ConstructorField("score", "integer"),
        ConstructorField("views", "integer"),
    ),
)
TAB = ApiTab(enabled=True, fields=NAMES, operations=("list", "show"), filterable=("rank", "views"))
URL = "/api/pb/v1/objects/notes"
SHAPES = 15_000
MEASURED_FROM = 3_000  # shapes sent before the first measure: every cache is full by then
ALLOWED_GROWTH = 8 * 1024 * 1024  # bytes of RSS the remaining 12,000 shapes may add


def resident_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def numbers(first: int, count: int) -> str:
    return ",".join(str(number) for number in range(first, first + count))


def shapes():
    subsets = [
        ",".join(subset)
        for size in range(1, len(NAMES) + 1)
        for subset in itertools.combinations(NAMES, size)
    ]
    for excluded in range(3):  # `in` takes at most 100 values (query/limits.py): 63 × 100 × 3 shapes
        for length in range(1, 101):
            for fields in subsets:
                query = f"fields={fields}&filter[rank][in]={numbers(0, length)}"
                yield query + (f"&filter[views][nin]={numbers(1000, excluded)}" if excluded else "")


@pytest.fixture
async def site(sqlite_database, host_factory):
    text = {"title": "t", "lead": "l", "rubric": "r"}
    rows = [dict.fromkeys(("rank", "score", "views"), n) | text for n in range(50)]

    async def unlimited(database, registry=None, **options):  # one client sends all 15,000 requests
        return await host_factory(database, registry, rate_limit=10**9, **options)

    return await constructor_host(sqlite_database, unlimited, NOTES, TAB, rows)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")
async def test_a_flood_of_distinct_statement_shapes_leaves_the_caches_at_their_bounds(site):
    before = 0
    for sent, query in enumerate(itertools.islice(shapes(), SHAPES)):
        if sent == MEASURED_FROM:
            before = resident_bytes()
        response = await site.client.get(f"{URL}?{query}&limit=2", headers=site.headers)
        assert response.status_code == 200, response.text
    grown = resident_bytes() - before
    sizes = site.api.caches.sizes()
    assert 0 < sizes["statements"] <= caches.KEPT_STATEMENTS
    assert sizes["statement_bytes"] <= caches.KEPT_STATEMENT_BYTES
    assert sizes["totals"] <= 1024 and sizes["built"] <= caches.KEPT_BUILT
    assert 0 < sizes["plans"] <= caches.KEPT_PLANS and sizes["steady"] <= caches.KEPT_STEADY
    assert grown < ALLOWED_GROWTH, f"RSS grew by {grown / 2**20:.1f} MB over {SHAPES - MEASURED_FROM} shapes"


def held_bytes(value) -> int:
    """The bytes a count's key really holds: its text, its tuples and their values."""
    size = sys.getsizeof(value)
    if isinstance(value, tuple):
        size += sum(held_bytes(item) for item in value)
    return size


def long_in_lists(count: int):
    """`count` distinct shapes, each with an `in` list of 90 to 100 values (issue 34.7)."""
    subsets = [",".join(s) for size in range(1, len(NAMES) + 1) for s in itertools.combinations(NAMES, size)]
    shapes = (
        f"fields={fields}&filter[rank][in]={numbers(0, length)}"
        for length in range(100, 89, -1)
        for fields in subsets
    )
    return itertools.islice(shapes, count)


async def test_distinct_long_filters_keep_counts_and_plans_within_their_bytes(database, host_factory):
    """Counts and plans were bounded in entries only: on PostgreSQL a count's key holds its SQL (a
    `CAST($n AS BIGINT)` per `in` value) and its values, and a plan its values, so 15,000 shapes with
    long `in` lists grew RSS by 11 MB and rising. Each now has a bound in bytes as well."""
    text = {"title": "t", "lead": "l", "rubric": "r"}
    rows = [dict.fromkeys(("rank", "score", "views"), n) | text for n in range(50)]

    async def unlimited(db, registry=None, **options):
        return await host_factory(db, registry, rate_limit=10**9, **options)

    site = await constructor_host(database, unlimited, NOTES, TAB, rows)
    for query in long_in_lists(300):
        response = await site.client.get(f"{URL}?{query}&limit=2", headers=site.headers)
        assert response.status_code == 200, response.text
        assert response.json()["meta"]["total"] == 50
    sizes = site.api.caches.sizes()
    kept = site.api.caches.totals.kept_keys()
    assert 0 < len(kept) < 300  # the bytes, not the 1,024 entries, made room
    assert sum(held_bytes(key) for key in kept) <= totals.KEPT_COUNT_BYTES
    assert all(totals.key_bytes(key) >= held_bytes(key) for key in kept)  # the estimate is not low
    assert sizes["total_bytes"] <= totals.KEPT_COUNT_BYTES
    assert 0 < sizes["plans"] < 300 and sizes["plan_bytes"] <= caches.KEPT_PLAN_BYTES
    # What was evicted is counted again, with the same answer.
    first = next(iter(long_in_lists(1)))
    response = await site.client.get(f"{URL}?{first}&limit=2", headers=site.headers)
    assert response.status_code == 200 and response.json()["meta"]["total"] == 50


async def test_freed_memory_goes_back_to_the_system_every_release_every_compiled_shapes(
    database, host_factory
):
    """Python's live objects stay flat under a flood of shapes, yet on PostgreSQL RSS rose by 0.9 MB
    every 1,000 shapes: glibc kept the pages the replaced statements freed (issue 34.7). Every
    `RELEASE_EVERY` compiled shapes they are given back, so no more than that many compile between
    two returns, whatever the database."""
    rows = [dict.fromkeys(("rank", "score", "views"), n) | {"title": "t"} for n in range(5)]

    async def unlimited(db, registry=None, **options):
        return await host_factory(db, registry, rate_limit=10**9, **options)

    site = await constructor_host(database, unlimited, NOTES, TAB, rows)
    before = site.api.caches.sizes()["compiled"]
    sent = caches.RELEASE_EVERY + 7
    for query in itertools.islice(shapes(), sent):
        response = await site.client.get(f"{URL}?{query}&limit=2", headers=site.headers)
        assert response.status_code == 200, response.text
    assert site.api.caches.sizes()["compiled"] == (before + sent) % caches.RELEASE_EVERY
