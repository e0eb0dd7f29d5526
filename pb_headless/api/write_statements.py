"""The statements of a write, compiled once per object and shape and kept in the API object's caches.

Compiling a SQLAlchemy INSERT, UPDATE or DELETE, and the SELECTs that check the row is served, cost
most of a write's CPU on SQLite (docs/performance.md, "What a write costs"). A write's SQL depends
only on the object (its spec, one per registry version), the database, which columns it sets and
which of their values are SQL expressions (a model's `default=func.now()`): that is its shape. The
first write of a shape compiles as always; later ones bind their values to the kept SQL
(database/statements.py). Entries are keyed by the spec, so a new registry version never meets the
statements of the old one, which age out of the bounded cache. An object with a `query` narrowing
(which may read the clock) builds its UPDATE, DELETE and row checks on every write, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import sqlalchemy as sa

from pb_headless.api.context import RequestContext
from pb_headless.database.statements import NOT_REUSABLE, Prepared, execute, paging_slots, prepare
from pb_headless.query import compile_show, parse_query, plan_show
from pb_headless.query.executor import fetch_by_key
from pb_headless.query.parameters import Binder
from pb_headless.query.planner import ShowPlan
from pb_headless.query.prepared import plan_slots
from pb_headless.registry import ObjectSpec

KEY = "pb_key"  # the parameter of the addressed row's key, outside the served check
_KEY_SLOT = ("key",)  # its slot: no column's name, which are the slots of the values a write sets
_NO_PARAMETERS = parse_query(())
Built = tuple[Any, dict[str, tuple[Any, Any]] | None]  # a statement, and its slots (None: not keepable)


def key_plan(spec: ObjectSpec) -> ShowPlan:
    """The plan that reads only a served row's key, made once per spec."""
    plan: ShowPlan | None = spec.derived.get("writes.key_plan")
    if plan is None:
        plan = spec.derived["writes.key_plan"] = ShowPlan((spec.pk,))
    return plan


def plain_plan(spec: ObjectSpec) -> ShowPlan:
    """The plan of the show answer without query parameters (what a write answers), made once per spec."""
    plan: ShowPlan | None = spec.derived.get("writes.plain_plan")
    if plan is None:
        plan = spec.derived["writes.plain_plan"] = plan_show(spec, _NO_PARAMETERS)
    return plan


async def is_served(context: RequestContext, spec: ObjectSpec, key: Any) -> bool:
    """Whether the object serves the row with this key (published, inside `query`), on the request's
    connection: inside a write's transaction, as that transaction sees it."""
    record, _ = await fetch_by_key(
        context.database, spec, key_plan(spec), key, context.backend.name, context.caches
    )
    return record is not None


async def lock_row(context: RequestContext, spec: ObjectSpec, key: Any) -> None:
    """Lock the row (`SELECT … FOR UPDATE`) where SQLite's BEGIN IMMEDIATE does not already hold it."""

    def build() -> Built:
        addressed = spec.pk.column == sa.bindparam(KEY, key, spec.pk.column.type)
        return sa.select(spec.pk.column).where(addressed).with_for_update(), _key_slot()

    prepared = _kept(context, spec, ("lock",), build, quick=False)
    if prepared is None:
        await context.database.fetch_one(build()[0])
        return
    await prepared.fetch(context.database, prepared.arguments({_KEY_SLOT: key}))


async def insert(context: RequestContext, spec: ObjectSpec, values: dict[str, Any], returning: bool) -> Any:
    """INSERT the row; the new row's key where the database gives it (returned, or the last row id)."""

    def build() -> Built:
        statement = spec.table.insert().values(_bound(spec, values))
        if returning:
            statement = statement.returning(spec.pk.column)
        return statement, {_parameter(name): (name, None) for name in values}

    shape = ("insert", returning, *_shape(values))
    return await _execute(context, spec, shape, build, values, narrowed=False, inserts=True)


async def update(context: RequestContext, spec: ObjectSpec, key: Any, values: dict[str, Any]) -> None:
    """UPDATE the row while the object serves it."""

    def build() -> Built:
        binder = Binder(context.backend.name, recording=True)
        where = served(context, spec, key, binder)
        slots = _key_slots(binder.parameters, key)
        if slots is not None:
            slots.update({_parameter(name): (name, None) for name in values})
        return spec.table.update().where(where).values(_bound(spec, values)), slots

    await _execute(context, spec, ("update", *_shape(values)), build, {**values, **_key_values(key)})


async def delete(context: RequestContext, spec: ObjectSpec, key: Any) -> None:
    """DELETE the row while the object serves it."""

    def build() -> Built:
        binder = Binder(context.backend.name, recording=True)
        where = served(context, spec, key, binder)
        return spec.table.delete().where(where), _key_slots(binder.parameters, key)

    await _execute(context, spec, ("delete",), build, _key_values(key))


def served(
    context: RequestContext, spec: ObjectSpec, key: Any, binder: Binder | None = None
) -> sa.ColumnElement[bool]:
    """WHERE of an update or delete: this key, and only while the object serves the row. The keys
    are read through a derived table, which MariaDB accepts on the table being changed. `binder`:
    a recording one notes the key's parameter (query/parameters.py)."""
    keys = compile_show(spec, key_plan(spec), key, binder or context.backend.name).subquery()
    addressed = spec.pk.column == sa.bindparam(KEY, key, spec.pk.column.type)
    return sa.and_(addressed, spec.pk.column.in_(sa.select(keys.c[spec.pk.name])))


async def _execute(
    context: RequestContext,
    spec: ObjectSpec,
    shape: tuple[Any, ...],
    build: Callable[[], Built],
    values: Mapping[Any, Any],
    narrowed: bool = True,
    inserts: bool = False,
) -> Any:
    """Run the write from its kept SQL; the statement is built and compiled only by the first write of
    its shape. One that cannot be kept runs the ordinary way (`narrowed`: its WHERE holds the object's
    `query`, which may give other SQL on every call)."""
    prepared = None if narrowed and spec.query is not None else _kept(context, spec, shape, build)
    if prepared is None:
        return await context.database.execute(build()[0])
    return await execute(context.database, prepared, prepared.arguments(values), inserts)


def _kept(
    context: RequestContext,
    spec: ObjectSpec,
    shape: tuple[Any, ...],
    build: Callable[[], Built],
    quick: bool = True,
) -> Prepared | None:
    """The kept statement of this shape, compiled from `build()` on first use; None: not keepable.
    `quick=False`: never offered to the accelerator (a locking read belongs to the transaction)."""
    key = (spec, "write", context.backend.name, shape)  # by the spec itself: one registry version's
    found = context.caches.statements.get(key)
    if found is None:
        statement, slots = build()
        prepared = None if slots is None else _prepared(context, statement, slots)
        if prepared is not None and not quick:
            prepared = replace(prepared, quick=False)
        found = context.caches.statements.put(key, prepared or NOT_REUSABLE)
    return found if isinstance(found, Prepared) else None


def _prepared(context: RequestContext, statement: Any, slots: dict[str, tuple[Any, Any]]) -> Prepared | None:
    # The served check's LIMIT 1 is the statement's own constant.
    return prepare(context.database, statement, {**slots, **paging_slots(statement, fixed=True)})


def _bound(spec: ObjectSpec, values: dict[str, Any]) -> dict[str, Any]:
    """The values as named parameters of their column's type; a SQL expression (a model's default)
    stays in the statement, where it is part of the shape."""
    return {
        name: value
        if isinstance(value, sa.ClauseElement)
        else sa.bindparam(_parameter(name), value, spec.table.c[name].type)
        for name, value in values.items()
    }


def _shape(values: dict[str, Any]) -> tuple[Any, ...]:
    # An expression is told by its identity: it is the spec's own default, kept with the spec.
    return tuple(
        (name, id(value) if isinstance(value, sa.ClauseElement) else None) for name, value in values.items()
    )


def _parameter(name: str) -> str:
    return f"pb_set_{name}"


def _key_slots(notes: Any, key: Any) -> dict[str, tuple[Any, Any]] | None:
    """The served check's recorded key (slot 0, where a show plan binds it) and the addressed key."""
    slots = plan_slots(notes, {0: key})
    return None if slots is None else {**slots, **_key_slot()}


def _key_slot() -> dict[str, tuple[Any, Any]]:
    return {KEY: (_KEY_SLOT, None)}


def _key_values(key: Any) -> dict[Any, Any]:
    return {0: key, _KEY_SLOT: key}
