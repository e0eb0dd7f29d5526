"""The cursors of a list answer (`meta.next_cursor`, `meta.prev_cursor`) and, for a page read by
cursor, its links: the same query with `after`/`before` in place of the paging parameters."""

from __future__ import annotations

from urllib.parse import unquote_plus

from pb_headless.query.cursors import encode_cursor
from pb_headless.query.executor import ListPage
from pb_headless.query.planner import ListPlan

# Parameters a cursor link replaces: the cursor it follows, and the offset paging it stands for.
_REPLACED = frozenset({"after", "before", "offset", "page"})


def page_cursors(plan: ListPlan, page: ListPage) -> dict[str, str | None]:
    """The positions of the page's last and first rows, where records lie past them (null at either
    end of the list)."""
    rows = page.rows
    if not rows:
        return {"next_cursor": None, "prev_cursor": None}
    cursor = plan.cursor
    backwards = cursor is not None and cursor.backwards
    if backwards:
        # Read backwards from a position: the rows after the page are the position's own.
        more_after, more_before = True, bool(page.more)
    else:
        more_after = bool(page.more) if page.more is not None else _more_by_total(plan, page)
        more_before = cursor is not None or plan.offset > 0
    fields = [ordering.field for ordering in plan.order]
    return {
        "next_cursor": encode_cursor(plan.made_for, rows[-1], fields) if more_after else None,
        "prev_cursor": encode_cursor(plan.made_for, rows[0], fields) if more_before else None,
    }


def cursor_links(address: str, written: str, positions: dict[str, str | None]) -> dict[str, str | None]:
    """`self` as written; `next`/`prev` with every other parameter kept and the cursor replaced."""
    kept = [part for part in written.split("&") if part and _key(part) not in _REPLACED]

    def link(name: str, cursor: str | None) -> str | None:
        return None if cursor is None else f"{address}?{'&'.join([*kept, f'{name}={cursor}'])}"

    return {
        "self": f"{address}?{written}" if written else address,
        "next": link("after", positions["next_cursor"]),
        "prev": link("before", positions["prev_cursor"]),
    }


def _more_by_total(plan: ListPlan, page: ListPage) -> bool:
    return plan.offset + len(page.records) < (page.total or 0)


def _key(part: str) -> str:
    return unquote_plus(part.partition("=")[0])
