"""`count=estimated`: the database's own estimate of how many rows a list has, where counting them
would cost more than an estimate is worth (docs/query.md, "Count control").

PostgreSQL and MariaDB estimate from their planner statistics, read with EXPLAIN of the statement
that would count, so filters and search narrow the estimate as they narrow the count. SQLite keeps no
statistics the library can read for an arbitrary filter: there the count is exact (and kept per data
version, query/totals.py). An estimate below `EXACT_BELOW` rows means counting is cheap: the caller
counts instead, and the total is exact.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from databases import Database
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

EXACT_BELOW = 10_000  # rows; below this a count costs about what the page itself costs


class _Explain(Executable, ClauseElement):
    """`EXPLAIN <statement>` with the statement's parameters still bound."""

    inherit_cache = False

    def __init__(self, statement: sa.Select[Any]) -> None:
        self.statement = statement


@compiles(_Explain, "postgresql")
def _explain_postgresql(element: _Explain, compiler: Any, **kw: Any) -> str:
    return "EXPLAIN (FORMAT JSON) " + compiler.process(element.statement, **kw)


@compiles(_Explain)
def _explain(element: _Explain, compiler: Any, **kw: Any) -> str:
    return "EXPLAIN " + compiler.process(element.statement, **kw)


async def estimated_total(database: Database, count: sa.Select[Any], dialect: str) -> int | None:
    """The database's estimate of the rows `count` would count, or None: count exactly instead (SQLite,
    an estimate under `EXACT_BELOW`, or a plan the library cannot read)."""
    estimate = await planner_estimate(database, count, dialect)
    return estimate if estimate is not None and estimate >= EXACT_BELOW else None


async def planner_estimate(database: Database, count: sa.Select[Any], dialect: str) -> int | None:
    """What the database's planner expects `count` to count, whatever its size; None on SQLite (no
    statistics) or for a plan the library cannot read."""
    if dialect == "postgresql":
        return _postgresql_rows(await database.fetch_val(_Explain(count)))
    if dialect == "mysql":
        return _mariadb_rows(await database.fetch_all(_Explain(count)))
    return None


def _postgresql_rows(found: Any) -> int | None:
    """`Plan Rows` of what the aggregate counts (the count's own node has one row)."""
    plan = (json.loads(found) if isinstance(found, str) else found)[0]["Plan"]
    counted = plan.get("Plans") or [plan]
    return int(counted[0].get("Plan Rows", 0))


def _mariadb_rows(rows: Any) -> int | None:
    """The rows MariaDB expects to read from the first table, narrowed by its `filtered` percentage."""
    for row in rows:
        mapping = dict(row._mapping) if hasattr(row, "_mapping") else dict(row)
        examined = mapping.get("rows")
        if examined is None:
            continue
        filtered = float(mapping.get("filtered") or 100.0)
        return int(int(examined) * filtered / 100.0)
    return None
