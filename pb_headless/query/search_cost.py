"""What a search may cost in one request: its page within `PAGE_BUDGET` (past it, a 422 keyed
`search`), its count exact up to `SEARCH_COUNT_EXACT` rows within `COUNT_BUDGET` (past either, an
estimate flagged `meta.total_estimated`). Never a 503 (docs/query.md, "Limits"; the budgets are the
database's own, database/budget.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.database.budget import COUNT_BUDGET, PAGE_BUDGET, OverBudget, statement_budget
from pb_headless.errors import ValidationFailed
from pb_headless.query.limits import SEARCH_COUNT_EXACT
from pb_headless.query.planner import ListPlan
from pb_headless.query.prepared import Reader

TOO_COSTLY = (
    "this search would examine more rows than one request may; add words that are less common, "
    "a filter, or sort by the key"
)


async def bounded_page(database: Database, read: Callable[[], Awaitable[Sequence[Any]]]) -> Sequence[Any]:
    """The search's page, or a 422 when the database stopped it at its budget."""
    try:
        async with statement_budget(database, PAGE_BUDGET):
            return await read()
    except OverBudget:
        raise ValidationFailed({"search": [TOO_COSTLY]}) from None


async def bounded_total(
    reader: Reader,
    plan: ListPlan,
    uncapped: Callable[[], sa.Select[Any]],
    count_all: Callable[[], Awaitable[int]],
    read: int,
    kept_estimate: Callable[[Callable[[], Awaitable[int]]], Awaitable[int]] | None = None,
) -> tuple[int, bool]:
    """The total and whether it is an estimate. Past the cap or the budget: the planner's estimate of
    the `uncapped` count (PostgreSQL, MariaDB), never below what is known to exist: the rows counted,
    and those up to the end of this page and the one read past it (`read`). `kept_estimate` keeps the
    estimate as the count is kept (query/executor.py): building and explaining the uncapped count
    cost several times the page."""
    try:
        async with statement_budget(reader.database, COUNT_BUDGET):
            counted: int | None = await count_all()
    except OverBudget:
        counted = None
    if counted is not None and counted <= SEARCH_COUNT_EXACT:
        return counted, False

    async def estimate() -> int:
        return await reader.backend.planner_estimate(uncapped()) or 0

    estimated = await (estimate() if kept_estimate is None else kept_estimate(estimate))
    return max(estimated, counted or 0, plan.offset + read), True
