"""Runs compiled plans on the host's `databases.Database`: a page, its total, and its relations."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from databases import Database

from pb_headless.database import oneoff
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.backends import backend_for
from pb_headless.database.caches import Caches
from pb_headless.database.statements import Prepared
from pb_headless.errors import ValidationFailed
from pb_headless.query.compiler import RELATION_KEY, relation_select
from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.estimates import estimated_total
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.query.prepared import (
    DEEP_FROM,
    CompiledRead,
    Reader,
    deep_statements,
    ordinary_count,
    ordinary_page,
    ordinary_show,
    plan_values,
    show_prepared,
)
from pb_headless.query.render import Row, render_record
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


async def fetch_page(reader: Reader, compiled: CompiledRead[ListPlan], version: Hashable | None) -> ListPage:
    """The page the compiled plan asks for, with the total its `count` asks for (docs/query.md).

    A total is kept in `reader.caches` with `version`: the data version the request read with its
    token (auth/authenticator.py), or `("changes", positions)`, the change-log positions of the
    tables read (changes/positions.py), which move with every write, whoever makes it, so such a kept
    total is always exact. None: nothing is kept.
    """
    plan = compiled.plan
    if plan.details:
        raise ValidationFailed(plan.details)
    read = compiled.read
    if read.search and read.limit > 0:  # within the search's budget (query/search_cost.py)
        rows = await bounded_page(reader.database, functools.partial(_page_rows, reader, compiled))
    else:
        rows = await _page_rows(reader, compiled)
    more = len(rows) > plan.limit if plan.reads_past else None
    rows = list(rows[: plan.limit])
    if plan.cursor is not None and plan.cursor.backwards:
        rows.reverse()
    total, estimated = await _total(reader, compiled, rows, version, more)
    records = compiled.render(rows)
    truncated = await _attach_relations(reader.database, plan.relations, rows, records, compiled.spec.pk.name)
    return ListPage(records, rows, total, truncated, more, estimated)


async def _page_rows(reader: Reader, compiled: CompiledRead[ListPlan]) -> Sequence[Row]:
    plan: ListPlan = compiled.read
    if plan.limit <= 0:
        return []
    database = reader.database
    if plan.cursor is not None:
        cursor_page = compiled.cursor
        if cursor_page is not None:
            return await cursor_page.fetch(database, cursor_page.arguments(compiled.values))
        spec = compiled.spec
        return await _rows_of(database, _narrowing(spec, plan))(ordinary_page(reader, compiled))
    prepared = compiled.statements
    if prepared is None:
        spec = compiled.spec
        return await _rows_of(database, _narrowing(spec, plan))(ordinary_page(reader, compiled))
    values = compiled.values
    if plan.offset >= DEEP_FROM:
        statements = deep_statements(reader, compiled)
        if statements is not None:
            accelerator = accelerator_of(database)
            spec = compiled.spec
            deep = await accelerator.deep_page(database, statements, values, spec.table.name, spec.pk.name)
            if deep is not None:
                return deep
    return await prepared.page.fetch(database, prepared.page.arguments(values))


async def _total(
    reader: Reader,
    compiled: CompiledRead[ListPlan],
    rows: Sequence[Row],
    data_version: Hashable | None,
    more: bool | None = None,
) -> tuple[int | None, bool]:
    """The total the plan's `count` asks for, and whether it is an estimate. The count is of the
    page's shape without its cursor, as read; with a cursor, the page's place in the list is unknown,
    so a short page says nothing about the total."""
    asked: ListPlan = compiled.plan
    plan: ListPlan = compiled.shaped
    if plan.count == "none":
        return None, False
    keyset, limit = asked.cursor is not None, asked.limit
    if not keyset and rows and len(rows) < limit:
        return plan.offset + len(rows), False  # a short, non-empty page is the last one: no count needed
    if not keyset and not rows and plan.offset == 0 and limit > 0:
        return 0, False
    database, backend, spec = reader.database, reader.backend, compiled.spec
    prepared = compiled.statements
    count_all: Callable[[], Awaitable[int]]
    if prepared is None:
        count_statement = ordinary_count(reader, compiled)
        count_all = functools.partial(_count, database, count_statement, _narrowing(spec, plan) is not None)
        count_key: Hashable = None
    else:
        count_arguments = prepared.count.arguments(compiled.values)
        count_all = functools.partial(_count_prepared, database, prepared.count, count_arguments)
        count_key = (prepared.count.sql, _hashable(count_arguments))
    uncapped = functools.partial(ordinary_count, reader, compiled, capped=False)
    if plan.count == "estimated":
        estimate = await estimated_total(backend, uncapped())
        if estimate is not None:
            return estimate, True
    kept_estimate = None
    if count_key is not None:
        version, exact = _count_version(database, data_version)
        totals = reader.caches.totals
        count_all = functools.partial(totals.total, count_key, version, count_all, exact)
        kept_estimate = functools.partial(totals.total, ("estimate", count_key), version, exact=exact)
    if not plan.search:
        return await count_all(), False
    return await bounded_total(reader, plan, uncapped, count_all, len(rows) + bool(more), kept_estimate)


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
    """`fetch_one` for a key already converted by the key's kind. For callers that keep no compiled
    read (a write's answer, the change feed, a webhook's body): `fetch_record` runs a kept one."""
    reader = Reader(database, backend_for(database), caches or Caches())
    return await fetch_record(reader, CompiledRead(spec, plan), pk_value)


async def fetch_record(
    reader: Reader, compiled: CompiledRead[ShowPlan], pk_value: Any
) -> tuple[dict[str, Any] | None, Truncated]:
    """The record of a compiled show with this key (already converted by the key's kind), or None;
    and the to-many relations cut."""
    database, spec, plan = reader.database, compiled.spec, compiled.plan
    prepared = show_prepared(reader, compiled, pk_value)
    if prepared is None:
        show = ordinary_show(reader, compiled, pk_value)
        fetch = database.fetch_one if spec.query is None else functools.partial(oneoff.fetch_row, database)
        row: Row | None = await fetch(show)
    else:
        rows = await prepared.fetch(database, prepared.arguments(plan_values(plan, pk_value)))
        row = rows[0] if rows else None
    if row is None:
        return None, {}
    record = compiled.render((row,))[0]  # rendering worked out once per plan
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
