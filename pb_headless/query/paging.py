"""Where a list page starts and what it counts: `limit`/`offset`/`page`, the cursors `after`/`before`
(query/cursors.py) and `count`. Pure, like the planner that calls it (docs/query.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pb_headless.query.conversion import ConversionError
from pb_headless.query.cursors import Cursor, decode_cursor
from pb_headless.query.grammar import ParsedQuery
from pb_headless.registry.spec import FieldSpec, ObjectSpec

COUNT_MODES = ("exact", "estimated", "none")  # `count=`; exact is the default


class Notes(Protocol):
    """What the planner notes: parameters dropped, and values that fail (a 422)."""

    def ignore(self, position: int, written: str) -> None: ...

    def fail(self, written: str, message: str) -> None: ...


def has_cursor(query: ParsedQuery) -> bool:
    return bool(query.after and query.after.value) or bool(query.before and query.before.value)


def plan_cursor(
    query: ParsedQuery, fields: Sequence[FieldSpec], made_for: str, notes: Notes
) -> Cursor | None:
    """The position `after` or `before` names in the order of `fields` (the sort fields, the key
    last); a cursor that does not fit this list is a 422."""
    after, before = query.after, query.before
    for term in (after, before):
        if term is not None and not term.value:  # `after=`: no position, as `search=` is no search
            notes.ignore(term.position, term.written)
    after = after if after and after.value else None
    before = before if before and before.value else None
    if after is not None and before is not None:
        notes.fail("before", "cannot be combined with after")
        return None
    term = after or before
    if term is None:
        return None
    name = "after" if term is after else "before"
    try:
        return decode_cursor(term.value, made_for, fields, backwards=name == "before")
    except ConversionError as error:
        notes.fail(name, str(error))
        return None


def plan_count(query: ParsedQuery, notes: Notes) -> str:
    """`count=exact|estimated|none`; any other value is ignored (and named)."""
    if query.count is None:
        return "exact"
    if query.count.value not in COUNT_MODES:
        notes.ignore(query.count.position, query.count.written)
        return "exact"
    return query.count.value


def plan_paging(spec: ObjectSpec, query: ParsedQuery, notes: Notes, *, keyset: bool) -> tuple[int, int]:
    """`limit` (clamped to the object's most) and `offset` (`page` counts in pages; `offset` wins)."""
    limit = spec.per_page if query.limit is None else min(query.limit.value, spec.max_per_page)
    if keyset:  # a cursor says where the page starts: `offset` and `page` have nothing to say
        for term in (query.offset, query.page):
            if term is not None:
                notes.ignore(term.position, term.written)
        return limit, 0
    if query.offset is not None:
        offset = query.offset.value
    elif query.page is not None:
        offset = (query.page.value - 1) * limit
    else:
        offset = 0
    return limit, offset
