"""Where the change log last touched some tables: what a list's `ETag` is derived from (docs/caching.md).

One statement reads, for each table, the position of its latest entry (the index on `table_name,
position` serves each as one look-up) and how far the log was pruned. A table without entries
stands at the pruned position: its last change, if any, was at or before it. The value of a table
therefore moves whenever one of its rows changes (the trigger writes an entry above every position
read before) and never comes back to a value it had: pruning removes entries in position order, so a
table whose entries were all pruned stands at a position at least as high as the one it stood at.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.database.caches import Caches
from pb_headless.database.change_triggers import PRUNED_ID
from pb_headless.database.statements import FetchedRow, fetch_fixed_built
from pb_headless.tables import changes, state

MOST_TABLES = 8  # an object's table and those of the relations a list shows; more are not derived


@functools.cache
def _statement(count: int) -> sa.Select[tuple[int, ...]]:
    """The statement for `count` tables (one object per count: compiled once per API object)."""
    columns = [
        sa.select(sa.func.max(changes.c.position))
        .where(changes.c.table_name == sa.bindparam(f"t{index}", type_=sa.String))
        .scalar_subquery()
        .label(f"p{index}")
        for index in range(count)
    ]
    pruned = sa.select(state.c.version).where(state.c.id == PRUNED_ID).scalar_subquery().label("pruned")
    return sa.select(*columns, pruned)


async def table_positions(database: Database, caches: Caches, tables: Sequence[str]) -> tuple[int, ...]:
    """Each table's position in the change log, in the order given (at most `MOST_TABLES`)."""
    if not 0 < len(tables) <= MOST_TABLES:
        raise ValueError(f"between 1 and {MOST_TABLES} tables, not {len(tables)}")
    values = {f"t{index}": table for index, table in enumerate(tables)}
    # Built once per row as read (database/statements.py, `fetch_fixed_built`).
    build = _positions(len(tables))
    found = await fetch_fixed_built(database, caches, _statement(len(tables)), values, build)
    return found[0] if found else build(FetchedRow())


@functools.cache
def _positions(count: int) -> Callable[[Mapping[str, Any]], tuple[int, ...]]:
    """The positions of a row of `_statement(count)` (one function per count: `fetch_fixed_built`
    keeps what it builds by function)."""

    def build(row: Mapping[str, Any]) -> tuple[int, ...]:
        pruned = int(row.get("pruned") or 0)
        found = (row.get(f"p{index}") for index in range(count))
        return tuple(pruned if position is None else int(position) for position in found)

    return build
