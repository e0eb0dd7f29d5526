"""SQL compiled once per object and plan shape, then run with bound values on the request's connection.

Building and compiling a SQLAlchemy statement costs a few hundred µs of CPU, more than running it
often does. The first plan of a shape (the same fields, filters with the same operators and number
of values, search terms, order and relations) compiles as always, while `parameters.recording()`
notes which bound parameter carries which plan value; later plans of that shape only convert their
values and run the compiled SQL on the host's `databases` connection (its raw driver connection,
under the connection's own query lock). A shape that does not compile to reusable SQL (an object
with a `query` narrowing, which may read the clock) is run the ordinary way every time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from databases import Database

from pb_headless.db import dialect_of
from pb_headless.query.compiler import (
    AFTER_KEY,
    compile_list,
    compile_seek,
    compile_show,
    is_deferred,
    search_match,
)
from pb_headless.query.parameters import recording
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.query.trigrams import MATCH_KEY, match_query
from pb_headless.registry.spec import ObjectSpec
from pb_headless.sqlite_pool import inline_reads

LIMIT, OFFSET, SEARCH, AFTER = "limit", "offset", "search", "after"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Bind:
    name: str
    slot: int | str  # index into the plan's values, or LIMIT / OFFSET
    convert: Callable[[Any], Any] | None  # plan value → parameter value
    process: Callable[[Any], Any] | None  # the dialect's bind processor


@dataclass(frozen=True, slots=True)
class Prepared:
    """One compiled statement in the form its driver takes, and how to read its rows."""

    sql: str
    style: str  # qmark (SQLite), dollar (asyncpg), named (aiomysql)
    binds: tuple[Bind, ...]  # in positional order for qmark and dollar
    keys: tuple[str, ...]  # result column names
    processors: tuple[Callable[[Any], Any] | None, ...]
    quick: bool = True  # bounded work (a look-up, a page): SQLite may run it on the loop's thread

    def arguments(self, values: Mapping[Any, Any]) -> Any:  # keyed by slot: an index or a name
        converted = []
        for bind in self.binds:
            value = values.get(bind.slot)
            if bind.convert is not None:
                value = bind.convert(value)
            if bind.process is not None:
                value = bind.process(value)
            converted.append(value)
        if self.style == "named":
            return {bind.name: value for bind, value in zip(self.binds, converted, strict=True)}
        return tuple(converted)

    async def fetch(self, database: Database, arguments: Any) -> list[dict[str, Any]]:
        rows = await _run(database, self.style, self.sql, arguments, self.quick)
        keys, processors = self.keys, self.processors
        if not any(processors):
            return [dict(zip(keys, row, strict=True)) for row in rows]
        return [self.processed(row) for row in rows]

    def processed(self, row: Sequence[Any]) -> dict[str, Any]:
        """One row as the driver gave it, by column name, each value converted by its type."""
        return {
            key: value if process is None or value is None else process(value)
            for key, process, value in zip(self.keys, self.processors, row, strict=True)
        }


@dataclass(frozen=True, slots=True)
class ListStatements:
    page: Prepared
    count: Prepared


@dataclass(frozen=True, slots=True)
class SeekStatements:
    """A deep page in key order from a remembered key (query/positions.py, compiler.compile_seek)."""

    first: Prepared  # the key `offset` rows from the start
    following: Prepared  # the key `offset` rows after `after`
    page: Prepared  # the page `offset` rows after `after`


_shapes: WeakKeyDictionary[ObjectSpec, dict[tuple[Any, ...], Any]] = WeakKeyDictionary()
_UNCACHEABLE = object()


def plan_values(plan: ShowPlan, pk_value: Any = None) -> dict[int | str, Any]:
    """The plan's values in the order the compiler binds them: filters in order, then search terms."""
    values: list[Any] = [] if pk_value is None else [pk_value]
    for condition in getattr(plan, "conditions", ()):
        if condition.operator == "null":
            continue
        if condition.operator in ("in", "nin", "between"):
            values.extend(condition.value)
        else:
            values.append(condition.value)
    values.extend(getattr(plan, "search", ()))
    slots: dict[int | str, Any] = dict(enumerate(values))
    if isinstance(plan, ListPlan):
        slots[LIMIT], slots[OFFSET], slots[SEARCH] = plan.limit, plan.offset, plan.search
    return slots


def list_statements(
    database: Database, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> ListStatements | None:
    """The page and count statements of this plan's shape, compiled on first use; None: not reusable."""
    key = (
        "list",
        dialect,
        _shape_of(plan),
        is_deferred(spec, plan, dialect),
        search_match(spec, plan, dialect),
    )
    return _cached(spec, key, lambda: _prepare_list(database, spec, plan, dialect))


def seek_statements(
    database: Database, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> SeekStatements | None:
    return _cached(
        spec, ("seek", dialect, _shape_of(plan)), lambda: _prepare_seek(database, spec, plan, dialect)
    )


def show_statement(
    database: Database, spec: ObjectSpec, plan: ShowPlan, pk_value: Any, dialect: str
) -> Prepared | None:
    key = ("show", dialect, _shape_of(plan))
    return _cached(spec, key, lambda: _prepare_show(database, spec, plan, pk_value, dialect))


def _cached(spec: ObjectSpec, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    if spec.query is not None:
        return None  # `query` is called on every compile: its SQL may differ from one request to the next
    shapes = _shapes.get(spec)
    if shapes is None:
        shapes = _shapes[spec] = {}
    found = shapes.get(key)
    if found is None:
        found = build()
        shapes[key] = _UNCACHEABLE if found is None else found
    return None if found is _UNCACHEABLE else found


def _shape_of(plan: ShowPlan) -> tuple[Any, ...]:
    conditions = tuple(
        (
            condition.field.name,
            str(condition.operator),
            condition.value
            if condition.operator == "null"
            else len(condition.value)
            if condition.operator in ("in", "nin", "between")
            else None,
        )
        for condition in getattr(plan, "conditions", ())
    )
    return (
        tuple(field.name for field in plan.fields),
        tuple(relation.name for relation in plan.relations),
        conditions,
        len(getattr(plan, "search", ())),
        tuple((order.field.name, order.descending) for order in getattr(plan, "order", ())),
    )


def _prepare_list(
    database: Database, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> ListStatements | None:
    with recording() as notes:
        page, count = compile_list(spec, plan, dialect)
    values = plan_values(plan)
    slots = _slots(notes, values)
    if slots is None:
        return None
    slots[MATCH_KEY] = (SEARCH, match_query)  # present only when the search index gives candidates
    page_slots = {**slots, **_paging_slots(page)}
    prepared_page = _prepare(database, page, page_slots)
    prepared_count = _prepare(database, count, slots)
    if prepared_page is None or prepared_count is None:
        return None
    # A count reads every matching row: never on the loop's thread (SQLite's count of a whole table is
    # one step that no budget can interrupt).
    return ListStatements(prepared_page, replace(prepared_count, quick=False))


def _prepare_seek(
    database: Database, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> SeekStatements | None:
    with recording() as notes:
        statements = compile_seek(spec, plan, dialect)
    slots = _slots(notes, plan_values(plan))
    if slots is None:
        return None
    slots[AFTER_KEY] = (AFTER, None)
    prepared = [
        _prepare(database, statement, {**slots, **_paging_slots(statement)}) for statement in statements
    ]
    if any(found is None for found in prepared):
        return None
    return SeekStatements(*cast("list[Prepared]", prepared))


def _prepare_show(
    database: Database, spec: ObjectSpec, plan: ShowPlan, pk_value: Any, dialect: str
) -> Prepared | None:
    with recording() as notes:
        statement = compile_show(spec, plan, pk_value, dialect)
    slots = _slots(notes, plan_values(plan, pk_value))
    if slots is None:
        return None
    return _prepare(database, statement, {**slots, **_paging_slots(statement, fixed=True)})


def _slots(notes: Sequence[Any], values: Mapping[int | str, Any]) -> dict[str, tuple[Any, Any]] | None:
    """Parameter key → (slot, conversion), when the compiler bound exactly the plan's values in order."""
    positional = [values[index] for index in range(len(values)) if index in values]
    if len(notes) != len(positional):
        return None
    slots: dict[str, tuple[Any, Any]] = {}
    for index, (note, value) in enumerate(zip(notes, positional, strict=True)):
        if note.value is not value and note.value != value:
            return None
        slots[note.parameter.key] = (index, note.convert)
    return slots


def _paging_slots(statement: sa.Select[Any], fixed: bool = False) -> dict[str, tuple[Any, Any]]:
    """LIMIT and OFFSET, wherever they are (a deferred page has them in its inner select): the
    plan's paging, or (`fixed`, show's LIMIT 1) the statement's own value."""
    slots: dict[str, tuple[Any, Any]] = {}
    for element in sa.sql.visitors.iterate(statement):
        if not isinstance(element, sa.Select):
            continue
        for clause, slot in ((element._limit_clause, LIMIT), (element._offset_clause, OFFSET)):
            if isinstance(clause, sa.BindParameter):
                slots[clause.key] = (slot, None) if not fixed else (slot, _constant(clause.value))
    return slots


def _constant(value: Any) -> Callable[[Any], Any]:
    return lambda _: value


def _prepare(
    database: Database,
    statement: sa.Select[Any],
    slots: Mapping[str, tuple[Any, Any]],
    constants: bool = False,
) -> Prepared | None:
    """The statement compiled for the database's driver. Every parameter of the statement must have a
    slot (unless `constants`: a fixed statement's own values are kept as they are); a parameter only
    the dialect adds while compiling, such as SQLite's `OFFSET 0` after a LIMIT, is a constant."""
    dialect = dialect_of(database)
    compiled = statement.compile(dialect=dialect)
    if compiled.literal_execute_params or compiled.post_compile_params:
        return None  # rendered into the SQL text per execution: not reusable as compiled
    in_statement = {parameter.key for parameter in _named_binds(statement)}
    names: dict[str, tuple[Any, Any]] = {}
    for parameter, name in compiled.bind_names.items():
        if parameter.key in slots:
            names[name] = slots[parameter.key]
        elif parameter.callable is None and (constants or parameter.key not in in_statement):
            names[name] = (None, _constant(parameter.value))
        else:
            return None  # a value of the statement that no slot carries: run it the ordinary way
    processors = compiled._bind_processors
    style = {"qmark": "qmark", "pyformat": "dollar" if dialect.name == "postgresql" else "named"}.get(
        dialect.paramstyle
    )
    if style is None:
        return None
    if style == "qmark":
        order = list(compiled.positiontup or ())
        sql = compiled.string
    else:
        order = sorted(names)
        sql = (
            compiled.string % {name: f"${i}" for i, name in enumerate(order, 1)}
            if style == "dollar"
            else compiled.string
        )
    binds = tuple(
        Bind(name, names[name][0], names[name][1], cast("Callable[[Any], Any] | None", processors.get(name)))
        for name in order
    )
    columns = compiled._result_columns
    keys = tuple(str(column.keyname) for column in columns)
    result_processors = tuple(column.type._cached_result_processor(dialect, None) for column in columns)
    return Prepared(sql, style, binds, keys, result_processors)


async def _run(
    database: Database, style: str, sql: str, arguments: Any, quick: bool = False
) -> Sequence[Sequence[Any]]:
    """Runs on the request's connection (the one `database.connection()` gives this task); on SQLite
    a quick read outside a transaction is first tried on the loop's thread (sqlite_pool.InlineReads)."""
    if quick and style == "qmark":
        inline = inline_reads(database)
        if inline is not None and not _in_transaction(_existing_connection(database)):
            rows = inline.fetchall(sql, arguments)
            if rows is not None:
                return rows
    connection = database.connection()
    async with connection:
        lock = getattr(connection, "_query_lock", None) or contextlib.nullcontext()
        async with lock:
            raw = connection.raw_connection
            if style == "qmark":
                return await raw.execute_fetchall(sql, arguments)
            if style == "dollar":
                return await raw.fetch(sql, *arguments)
            async with raw.cursor() as cursor:
                await cursor.execute(sql, arguments)
                return await cursor.fetchall()


def _existing_connection(database: Database) -> Any:
    """The connection this task already has, without making one (as `database.connection()` would)."""
    if database._global_connection is not None:  # force_rollback: one connection for every task
        return database._global_connection
    task = asyncio.current_task()
    return None if task is None else database._connection_map.get(task)


def _in_transaction(connection: Any) -> bool:
    """Whether this task's connection holds an open transaction (its reads must see its own writes).
    A connection not acquired yet holds none."""
    raw = getattr(getattr(connection, "_connection", None), "_connection", None)
    return raw is not None and bool(raw.in_transaction)


class Row(dict):
    """A fetched row read by column name, also as `row._mapping` like a SQLAlchemy or `databases` row."""

    @property
    def _mapping(self) -> Row:
        return self


_fixed: WeakKeyDictionary[Database, dict[int, Prepared | None]] = WeakKeyDictionary()
_built: WeakKeyDictionary[Database, dict[tuple[int, Callable[[Any], Any]], OrderedDict[Any, Any]]] = (
    WeakKeyDictionary()
)
KEPT_BUILT = 256  # results of `fetch_fixed_built` kept per statement and database, newest use last


async def fetch_fixed(database: Database, statement: sa.Select[Any], values: Mapping[str, Any]) -> list[Row]:
    """Rows of a statement whose only variables are named `sa.bindparam`s, compiled once per database.

    For the statements every request runs (the token look-up): `statement` must be the same object
    each time (a module constant), `values` gives each bindparam by name.
    """
    prepared = _fixed_prepared(database, statement, values)
    if prepared is None:  # this statement cannot be kept compiled
        return [Row(row._mapping) for row in await database.fetch_all(statement, dict(values))]
    return [Row(row) for row in await prepared.fetch(database, prepared.arguments(values))]


async def fetch_fixed_built(
    database: Database, statement: sa.Select[Any], values: Mapping[str, Any], build: Callable[[Row], T]
) -> list[T]:
    """`build(row)` for each row of `fetch_fixed`, kept per row as the database gave it: a row read
    again (the same token, the same versions) is not converted and built again. `build` must be a
    pure function of the row."""
    prepared = _fixed_prepared(database, statement, values)
    if prepared is None:
        return [build(row) for row in await fetch_fixed(database, statement, values)]
    kept: OrderedDict[tuple[Any, ...], T] = _built.setdefault(database, {}).setdefault(
        (id(statement), build), OrderedDict()
    )
    built = []
    for raw in await _run(database, prepared.style, prepared.sql, prepared.arguments(values), prepared.quick):
        key = tuple(raw)
        found = kept.get(key)
        if found is None:
            found = kept[key] = build(Row(prepared.processed(raw)))
            while len(kept) > KEPT_BUILT:
                kept.popitem(last=False)
        else:
            kept.move_to_end(key)
        built.append(found)
    return built


def _fixed_prepared(
    database: Database, statement: sa.Select[Any], values: Mapping[str, Any]
) -> Prepared | None:
    compiled = _fixed.get(database)
    if compiled is None:
        compiled = _fixed[database] = {}
    prepared = compiled.get(id(statement), _UNCACHEABLE)
    if prepared is _UNCACHEABLE:
        # The parameters named in `values` vary; every other one is a constant of the statement.
        slots = {
            parameter.key: (parameter.key, None)
            for parameter in _named_binds(statement)
            if parameter.key in values
        }
        prepared = compiled[id(statement)] = _prepare(database, statement, slots, constants=True)
    return prepared if isinstance(prepared, Prepared) else None


def _named_binds(statement: sa.Select[Any]) -> list[sa.BindParameter[Any]]:
    found: list[sa.BindParameter[Any]] = []
    sa.sql.visitors.traverse(statement, {}, {"bindparam": found.append})
    return found
