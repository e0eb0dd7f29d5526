"""Runs compiled plans on the host's `databases.Database`: a page, its total, and its relations."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from databases import Database

from pb_headless.database import oneoff
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.caches import Caches
from pb_headless.database.positions import STEP
from pb_headless.database.statements import Prepared
from pb_headless.errors import ValidationFailed
from pb_headless.query.compiler import (
    DEFERRED_OFFSET,
    RELATION_KEY,
    compile_list,
    compile_show,
    in_key_order,
    relation_select,
    search_match,
)
from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.estimates import estimated_total
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.query.prepared import (
    cursor_statement,
    list_statements,
    plan_values,
    seek_statements,
    show_statement,
)
from pb_headless.query.render import Row, render_record, render_records
from pb_headless.query.search_cost import bounded_page, bounded_total
from pb_headless.registry.spec import ObjectSpec, RelationSpec

# Relation name → primary keys of the records whose to-many relation shows only its first records.
Truncated = dict[str, list[Any]]


@dataclass(frozen=True, slots=True)
class ListPage:
    """A page of a list: its records, the rows they came from (cursors read their sort values), the
    total (None with `count=none`; an estimate when `estimated`), and what was cut."""

    records: list[dict[str, Any]]
    rows: Sequence[Row]
    total: int | None
    truncated: Truncated
    more: bool | None = None  # read one row past the page: whether more follow in its direction
    estimated: bool = False


async def fetch_list(
    database: Database,
    spec: ObjectSpec,
    plan: ListPlan,
    dialect: str,
    caches: Caches | None = None,
    data_version: int | None = None,
) -> tuple[list[dict[str, Any]], int, Truncated]:
    """The page of records, the total number of matching records, and the to-many relations cut."""
    exact = replace(plan, count="exact", cursor=None)
    page = await fetch_page(database, spec, exact, dialect, caches, data_version)
    return page.records, page.total or 0, page.truncated


async def fetch_page(
    database: Database,
    spec: ObjectSpec,
    plan: ListPlan,
    dialect: str,
    caches: Caches | None = None,
    data_version: int | None = None,
    written: Hashable | None = None,
) -> ListPage:
    """The page `plan` asks for, with the total its `count` asks for (docs/query.md).

    `caches`: the API object's (compiled shapes, kept counts); without them nothing is kept. A total
    is kept only with the `data_version` the request read with its token (auth/authenticator.py), or,
    when given, with `written`: the change-log positions of the tables read (changes/positions.py),
    which move with every write, whoever makes it, so such a kept total is always exact.
    """
    if plan.details:
        raise ValidationFailed(plan.details)
    caches = caches or Caches()
    read, shaped = _as_read(plan)
    prepared = list_statements(database, caches, spec, shaped, dialect)
    if read.search and read.limit > 0:  # within the search's budget (query/search_cost.py)
        page = functools.partial(_page_rows, database, caches, spec, read, prepared, dialect)
        rows = await bounded_page(database, page)
    else:
        rows = await _page_rows(database, caches, spec, read, prepared, dialect)
    more = len(rows) > plan.limit if plan.reads_past else None
    rows = list(rows[: plan.limit])
    if plan.cursor is not None and plan.cursor.backwards:
        rows.reverse()
    version = data_version if written is None else ("changes", written)
    total, estimated = await _total(
        database, caches, spec, shaped, prepared, rows, dialect, plan, version, more
    )
    records = render_records(rows, plan.fields, plan.derived)
    truncated = await _attach_relations(database, plan.relations, rows, records, spec.pk.name)
    return ListPage(records, rows, total, truncated, more, estimated)


def _as_read(plan: ListPlan) -> tuple[ListPlan, ListPlan]:
    """The plan as read and its shape without the cursor, worked out once per plan: a page that must
    say itself whether more follow reads one row more; the statements of its shape are those of an
    offset page (a cursor adds its seek condition to the page only)."""
    derived = plan.derived
    found = derived.get("read")
    if found is None:
        read = replace(plan, limit=plan.limit + 1) if plan.reads_past and plan.limit > 0 else plan
        found = derived["read"] = (read, replace(read, cursor=None))
    return found


async def _page_rows(
    database: Database, caches: Caches, spec: ObjectSpec, plan: ListPlan, prepared: Any, dialect: str
) -> Sequence[Row]:
    if plan.limit <= 0:
        return []
    if plan.cursor is not None:
        cursor_page = cursor_statement(database, caches, spec, plan, dialect)
        if cursor_page is not None:
            return await cursor_page.fetch(database, cursor_page.arguments(plan_values(plan)))
    if prepared is None or plan.cursor is not None:
        return await _rows_of(database, _narrowing(spec, plan))(compile_list(spec, plan, dialect)[0])
    values = plan_values(plan)
    rows = await _deep_page(database, caches, spec, plan, dialect, values)
    if rows is not None:
        return rows
    return await prepared.page.fetch(database, prepared.page.arguments(values))


async def _total(
    database: Database,
    caches: Caches,
    spec: ObjectSpec,
    plan: ListPlan,
    prepared: Any,
    rows: Sequence[Row],
    dialect: str,
    asked: ListPlan,
    data_version: Hashable | None,
    more: bool | None = None,
) -> tuple[int | None, bool]:
    """The total the plan's `count` asks for, and whether it is an estimate. `plan` is the page's
    shape without its cursor, as read; `asked` the plan as planned (with a cursor, the page's place in
    the list is unknown, so a short page says nothing about the total)."""
    if plan.count == "none":
        return None, False
    keyset, limit = asked.cursor is not None, asked.limit
    if not keyset and rows and len(rows) < limit:
        return plan.offset + len(rows), False  # a short, non-empty page is the last one: no count needed
    if not keyset and not rows and plan.offset == 0 and limit > 0:
        return 0, False
    count_all: Callable[[], Awaitable[int]]
    if prepared is None:
        count_statement = compile_list(spec, plan, dialect)[1]
        count_all = functools.partial(_count, database, count_statement, _narrowing(spec, plan) is not None)
        count_key: Hashable = None
    else:
        count_arguments = prepared.count.arguments(plan_values(plan))
        count_all = functools.partial(_count_prepared, database, prepared.count, count_arguments)
        count_key = (prepared.count.sql, _hashable(count_arguments))
    uncapped = functools.partial(compile_list, spec, plan, dialect, capped=False)
    if plan.count == "estimated":
        estimate = await estimated_total(database, uncapped()[1], dialect)
        if estimate is not None:
            return estimate, True
    kept_estimate = None
    if count_key is not None:
        version, exact = _count_version(database, data_version)
        count_all = functools.partial(caches.totals.total, count_key, version, count_all, exact)
        kept_estimate = functools.partial(caches.totals.total, ("estimate", count_key), version, exact=exact)
    if not plan.search:
        return await count_all(), False
    return await bounded_total(
        database, plan, dialect, uncapped, count_all, len(rows) + bool(more), kept_estimate
    )


async def fetch_one(
    database: Database,
    spec: ObjectSpec,
    plan: ShowPlan,
    pk_raw: str,
    dialect: str,
    caches: Caches | None = None,
) -> tuple[dict[str, Any] | None, Truncated]:
    """The published record with this id, or None (a 404) when there is none or the id cannot be one;
    and the to-many relations cut."""
    try:
        pk_value = convert(spec.pk, pk_raw)
    except ConversionError:
        return None, {}
    return await fetch_by_key(database, spec, plan, pk_value, dialect, caches)


async def fetch_by_key(
    database: Database,
    spec: ObjectSpec,
    plan: ShowPlan,
    pk_value: Any,
    dialect: str,
    caches: Caches | None = None,
) -> tuple[dict[str, Any] | None, Truncated]:
    """`fetch_one` for a key already converted by the key's kind."""
    prepared = show_statement(database, caches or Caches(), spec, plan, pk_value, dialect)
    if prepared is None:
        show = compile_show(spec, plan, pk_value, dialect)
        fetch = database.fetch_one if spec.query is None else functools.partial(oneoff.fetch_row, database)
        row: Row | None = await fetch(show)
    else:
        rows = await prepared.fetch(database, prepared.arguments(plan_values(plan, pk_value)))
        row = rows[0] if rows else None
    if row is None:
        return None, {}
    record = render_records((row,), plan.fields, plan.derived)[0]  # rendering worked out once per plan
    if not plan.relations:  # the usual show: nothing to attach, no coroutine for it
        return record, {}
    truncated = await _attach_relations(database, plan.relations, [row], [record], spec.pk.name)
    return record, truncated


async def _count(database: Database, count: Any, narrowed: bool) -> int:
    return int(await (oneoff.fetch_value(database, count) if narrowed else database.fetch_val(count)) or 0)


def _narrowing(spec: ObjectSpec, plan: ListPlan) -> Any:
    """A host's narrowing in a list's statement: the object's `query`, or a path's related one."""
    return spec.query or next(iter(plan.narrowings), None)


def _rows_of(database: Database, narrowing: Any) -> Callable[[Any], Awaitable[Sequence[Any]]]:
    """How to read a statement: through database/oneoff.py when a host's `narrowing` is in it."""
    return database.fetch_all if narrowing is None else functools.partial(oneoff.fetch_rows, database)


async def _count_prepared(database: Database, count: Prepared, arguments: Any) -> int:
    rows = await count.fetch(database, arguments)
    return int(next(iter(rows[0].values())) or 0) if rows else 0


async def _deep_page(
    database: Database, caches: Caches, spec: ObjectSpec, plan: ListPlan, dialect: str, values: dict[Any, Any]
) -> Sequence[Any] | None:
    """A deep page in key order, when the database can start it from a noted key (database/positions.py)."""
    accelerator = accelerator_of(database)
    if not accelerator.deep_pages or plan.offset < max(STEP, DEFERRED_OFFSET) or plan.limit <= 0:
        return None
    if not in_key_order(spec, plan) or search_match(spec, plan, dialect) is not None:
        return None
    statements = seek_statements(database, caches, spec, plan, dialect)
    if statements is None:
        return None
    return await accelerator.deep_page(database, statements, values, spec.table.name, spec.pk.name)


def _count_version(database: Database, seen: Hashable | None) -> tuple[Hashable | None, bool]:
    """What a kept count must have been taken at: the library's data version and, where the database
    has one, its own (then the count is exact whoever writes; database/totals.py); or the change-log
    positions of the tables read, which are exact by themselves."""
    if seen is None:
        return None, False
    if isinstance(seen, tuple) and seen[0] == "changes":
        return seen, True
    written = accelerator_of(database).data_version()
    if written is None:
        return seen, False
    return (seen, written), True


def _hashable(arguments: Any) -> Hashable:
    return tuple(sorted(arguments.items())) if isinstance(arguments, dict) else tuple(arguments)


async def _attach_relations(
    database: Database,
    relations: Sequence[RelationSpec],
    rows: Sequence[Row],
    records: list[dict[str, Any]],
    pk_name: str,
) -> Truncated:
    """One query per relation for the whole page (never one per row); what was cut, by relation."""
    truncated: Truncated = {}
    for relation in relations:
        local_name = relation.local.name
        keys = list(dict.fromkeys(row[local_name] for row in rows if row[local_name] is not None))
        related, cut = await _related(database, relation, keys)
        for row, record in zip(rows, records, strict=True):
            found = related.get(row[local_name], [])
            record[relation.name] = found if relation.many else (found[0] if found else None)
            if row[local_name] in cut:
                truncated.setdefault(relation.name, []).append(record[pk_name])
    return truncated


async def _related(
    database: Database, relation: RelationSpec, keys: list[Any]
) -> tuple[dict[Any, list[dict[str, Any]]], set[Any]]:
    """The rendered related records by key, and the keys whose to-many list was cut at its limit."""
    if not keys:
        return {}, set()
    grouped: dict[Any, list[dict[str, Any]]] = {}
    cut: set[Any] = set()
    for row in await _rows_of(database, relation.query)(relation_select(relation, keys)):
        found = grouped.setdefault(row[RELATION_KEY], [])
        if relation.many and len(found) >= relation.limit:
            cut.add(row[RELATION_KEY])  # the window's one extra row: there are more than the limit
        else:
            found.append(render_record(row, relation.fields))
    return grouped, cut
