"""No cache of a process grows without bound (issue 26.3; docs/performance.md, "What a process keeps").

Any read token can send new statement shapes: every subset of `fields=` times every length of an
`in` list compiles to new SQL. 15,000 distinct shapes once took a process from 63 to 231 MB, kept
when idle. Now every cache has a bound: the caches stay at theirs, and RSS stays within a few MB.
"""

from __future__ import annotations

import itertools
import os

import pytest

from pb_headless.constructor import ApiTab, ConstructorField, ConstructorTable
from pb_headless.database import caches
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
