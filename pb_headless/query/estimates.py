"""`count=estimated`: the database's own estimate of how many rows a list has, where counting them
would cost more than an estimate is worth (docs/query.md, "Count control").

PostgreSQL and MariaDB estimate from their planner statistics, read with EXPLAIN of the statement
that would count (the backend's `planner_estimate`, database/explain.py), so filters and search
narrow the estimate as they narrow the count. SQLite keeps no statistics the library can read for an
arbitrary filter: there the count is exact (and kept per data version, database/totals.py). An
estimate below `EXACT_BELOW` rows means counting is cheap: the caller counts instead, and the total
is exact.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from pb_headless.database.backends import Backend

EXACT_BELOW = 10_000  # rows; below this a count costs about what the page itself costs


async def estimated_total(backend: Backend, count: sa.Select[Any]) -> int | None:
    """The database's estimate of the rows `count` would count, or None: count exactly instead (SQLite,
    an estimate under `EXACT_BELOW`, or a plan the library cannot read)."""
    estimate = await backend.planner_estimate(count)
    return estimate if estimate is not None and estimate >= EXACT_BELOW else None
