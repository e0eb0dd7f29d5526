"""The WHERE condition of a cursor page: the rows after (or before) a position in the list's order.

Rows come after a position when they are equal on the first k sort fields and after it on the next
one, for some k — the expansion of a row-value comparison that also holds for mixed directions and
NULLs. NULLs sit where the database's own ORDER BY puts them, as in offset pages: first in ascending
order on SQLite and MariaDB, last on PostgreSQL (and the other way round descending). A leading bound
on the first sort field alone is added so that an index on that field can start the scan at the
position instead of reading every row before it (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from pb_headless.database.backends import Backend
from pb_headless.query.cursors import Cursor
from pb_headless.query.planner import Ordering
from pb_headless.registry.spec import FieldSpec

Comparable = Callable[[FieldSpec], sa.ColumnElement[Any]]
Bound = Callable[[FieldSpec, Any], sa.ColumnElement[Any]]


def seek_condition(
    order: Sequence[Ordering],
    cursor: Cursor,
    facts: Backend | type[Backend],
    comparable: Comparable,
    bound: Bound,
) -> sa.ColumnElement[bool]:
    """Rows strictly after the cursor's position in `order` (before it, for a backwards cursor).
    `facts`: the database's backend, which says where its ORDER BY puts NULLs (`nulls_sort_low`)."""
    low = facts.nulls_sort_low
    alternatives: list[sa.ColumnElement[bool]] = []
    equal: list[sa.ColumnElement[bool]] = []
    for ordering, value in zip(order, cursor.values, strict=True):
        column = comparable(ordering.field)
        ahead = _ahead(ordering, column, value, cursor.backwards, low, bound)
        if ahead is not None:
            alternatives.append(sa.and_(*equal, ahead))
        equal.append(column.is_(None) if value is None else column == bound(ordering.field, value))
    condition = sa.or_(*alternatives) if alternatives else sa.false()
    leading = _at_or_ahead(order[0], comparable(order[0].field), cursor, low, bound)
    return condition if leading is None else sa.and_(leading, condition)


def _ahead(
    ordering: Ordering,
    column: sa.ColumnElement[Any],
    value: Any,
    backwards: bool,
    low: bool,
    bound: Bound,
) -> sa.ColumnElement[bool] | None:
    """Values of one field strictly after `value` in the walking direction; None when nothing is."""
    descending = ordering.descending != backwards
    nulls_last = _nulls_last(ordering, descending, low)
    if value is None:
        return None if nulls_last else column.is_not(None)
    parameter = bound(ordering.field, value)
    after = column < parameter if descending else column > parameter
    return sa.or_(after, column.is_(None)) if nulls_last else after


def _at_or_ahead(
    ordering: Ordering, column: sa.ColumnElement[Any], cursor: Cursor, low: bool, bound: Bound
) -> sa.ColumnElement[bool] | None:
    """The first field at or after the position: redundant with the expansion, but a range an index
    can seek to. Left out where it would need an OR with IS NULL (no range then)."""
    value = cursor.values[0]
    descending = ordering.descending != cursor.backwards
    nulls_last = _nulls_last(ordering, descending, low)
    if value is None or nulls_last or len(cursor.values) == 1:
        return None
    parameter = bound(ordering.field, value)
    return column <= parameter if descending else column >= parameter


def _nulls_last(ordering: Ordering, descending: bool, low: bool) -> bool:
    """Whether NULLs of this field come after every value in the walking direction (`low`: NULL
    orders before every value ascending); a column that cannot hold NULL has none to place."""
    return bool(ordering.field.column.nullable) and descending == low
