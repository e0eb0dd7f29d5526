"""`EXPLAIN` of a statement, and the rows each database's planner expects it to read: what the
backends' `planner_estimate` answers (`count=estimated`, a search's total past its cap)."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable


class Explain(Executable, ClauseElement):
    """`EXPLAIN <statement>` with the statement's parameters still bound."""

    inherit_cache = False

    def __init__(self, statement: sa.Select[Any]) -> None:
        self.statement = statement


@compiles(Explain, "postgresql")
def _explain_postgresql(element: Explain, compiler: Any, **kw: Any) -> str:
    return "EXPLAIN (FORMAT JSON) " + compiler.process(element.statement, **kw)


@compiles(Explain)
def _explain(element: Explain, compiler: Any, **kw: Any) -> str:
    return "EXPLAIN " + compiler.process(element.statement, **kw)


def postgresql_rows(found: Any) -> int | None:
    """`Plan Rows` of what the aggregate counts (the count's own node has one row)."""
    plan = (json.loads(found) if isinstance(found, str) else found)[0]["Plan"]
    counted = plan.get("Plans") or [plan]
    return int(counted[0].get("Plan Rows", 0))


def mariadb_rows(rows: Any) -> int | None:
    """The rows MariaDB expects to read from the first table, narrowed by its `filtered` percentage."""
    for row in rows:
        mapping = dict(row._mapping) if hasattr(row, "_mapping") else dict(row)
        examined = mapping.get("rows")
        if examined is None:
            continue
        filtered = float(mapping.get("filtered") or 100.0)
        return int(int(examined) * filtered / 100.0)
    return None
