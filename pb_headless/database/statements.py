"""Statements compiled once into their driver's SQL, then run with bound values on the request's connection.

Building and compiling a SQLAlchemy statement costs more CPU than running it often does
(docs/performance.md, "What made each difference"). `prepare` turns a statement into a `Prepared`:
the SQL in the form the driver takes (qmark for SQLite, `$1` for asyncpg, named for aiomysql), which
slot of the caller's values feeds each parameter, and how each result column is read.
`Prepared.fetch` runs it on the host's `databases` connection (its raw driver connection, under the
connection's own query lock); a quick read is first offered to the database's accelerator (SQLite
reads it on the loop's thread). The plan shapes that use this live in query/prepared.py; the
library's own constant queries (the token look-up, the version) in `fetch_fixed`. Both are kept in
the API object's caches (database/caches.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from databases import Database

from pb_headless.database import internals
from pb_headless.database.accelerator_interface import NO_TURN
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.caches import Caches
from pb_headless.database.dialect import dialect_of
from pb_headless.database.slots import LIMIT, OFFSET

T = TypeVar("T")
R = TypeVar("R")
BIND_BYTES = 140  # what one `Bind` or result column of a `Prepared` holds (tracemalloc, SQLite)
NOT_REUSABLE = object()  # kept for a statement that cannot be kept compiled: run it the ordinary way
VARIES = object()  # a `Bind.fixed` of a parameter whose value comes from the caller's values


@dataclass(frozen=True, slots=True)
class Bind:
    name: str
    slot: int | str  # index into the plan's values, or LIMIT / OFFSET
    convert: Callable[[Any], Any] | None  # plan value → parameter value
    process: Callable[[Any], Any] | None  # the dialect's bind processor
    fixed: Any = VARIES  # a constant's parameter value, converted and processed once (`Constant`)


@dataclass(frozen=True, slots=True)
class Prepared:
    """One compiled statement in the form its driver takes, and how to read its rows."""

    sql: str
    style: str  # qmark (SQLite), dollar (asyncpg), named (aiomysql)
    binds: tuple[Bind, ...]  # in positional order for qmark and dollar
    keys: tuple[str, ...]  # result column names
    processors: tuple[Callable[[Any], Any] | None, ...]
    quick: bool = True  # bounded work (a look-up, a page): SQLite may run it on the loop's thread
    custom_plan: bool = False  # PostgreSQL plans it for its values each time (`LIKE`: see `run`)

    @property
    def weight(self) -> int:
        """The bytes it holds, roughly: its SQL, and a bind (name, slot, converters) or column each."""
        return 400 + len(self.sql) + BIND_BYTES * (len(self.binds) + len(self.keys))

    def arguments(self, values: Mapping[Any, Any]) -> Any:  # keyed by slot: an index or a name
        converted = []
        for bind in self.binds:
            value = bind.fixed
            if value is VARIES:
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
        rows = await run(database, self.style, self.sql, arguments, self.quick, self.custom_plan)
        keys = self.keys
        converted = [
            (index, key, process)
            for index, (key, process) in enumerate(zip(keys, self.processors, strict=True))
            if process is not None
        ]
        found = [dict(zip(keys, row, strict=True)) for row in rows]
        for index, key, process in converted:  # only the columns with a conversion, each once per row
            for row, record in zip(rows, found, strict=True):
                value = row[index]
                if value is not None:
                    record[key] = process(value)
        return found

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

    @property
    def weight(self) -> int:
        return self.page.weight + self.count.weight


@dataclass(frozen=True, slots=True)
class SeekStatements:
    """A deep page in key order from a noted key (database/positions.py, compiler.compile_seek)."""

    first: Prepared  # the key `offset` rows from the start
    following: Prepared  # the key `offset` rows after `after`
    page: Prepared  # the page `offset` rows after `after`

    @property
    def weight(self) -> int:
        return self.first.weight + self.following.weight + self.page.weight


def paging_slots(statement: sa.Select[Any], fixed: bool = False) -> dict[str, tuple[Any, Any]]:
    """LIMIT and OFFSET, wherever they are (a deferred page has them in its inner select): the
    plan's paging, or (`fixed`, show's LIMIT 1) the statement's own value."""
    slots: dict[str, tuple[Any, Any]] = {}
    for element in sa.sql.visitors.iterate(statement):
        if not isinstance(element, sa.Select):
            continue
        for clause, slot in zip(internals.limit_and_offset(element), (LIMIT, OFFSET), strict=True):
            if isinstance(clause, sa.BindParameter):
                slots[clause.key] = (slot, None) if not fixed else (slot, Constant(clause.value))
    return slots


class Constant:
    """A slot's converter that gives the same value whatever it is given (a statement's own value)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self, _: Any) -> Any:
        return self.value


def _bind(name: str, slot: Any, convert: Callable[[Any], Any] | None, process: Any) -> Bind:
    """A parameter's `Bind`; a constant's value is converted and processed here, once."""
    if not isinstance(convert, Constant):
        return Bind(name, slot, convert, process)
    value = convert.value
    return Bind(name, slot, convert, process, value if process is None else process(value))


def prepare(
    database: Database,
    statement: sa.Select[Any] | sa.Insert | sa.Update | sa.Delete,
    slots: Mapping[str, tuple[Any, Any]],
    constants: bool = False,
) -> Prepared | None:
    """The statement (a SELECT, or a write for `execute`) compiled for the database's driver. Every
    parameter of the statement must have a slot (unless `constants`: a fixed statement's own values
    are kept as they are); a parameter only the dialect adds while compiling, such as SQLite's
    `OFFSET 0` after a LIMIT, is a constant."""
    dialect = dialect_of(database)
    compiled = statement.compile(dialect=dialect)
    if compiled.literal_execute_params or compiled.post_compile_params:
        return None  # rendered into the SQL text per execution: not reusable as compiled
    in_statement = {parameter.key for parameter in named_binds(statement)}
    names: dict[str, tuple[Any, Any]] = {}
    for parameter, name in compiled.bind_names.items():
        if parameter.key in slots:
            names[name] = slots[parameter.key]
        elif parameter.callable is None and (constants or parameter.key not in in_statement):
            names[name] = (None, Constant(parameter.value))
        else:
            return None  # a value of the statement that no slot carries: run it the ordinary way
    processors = internals.bind_processors(compiled)
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
    binds = tuple(_bind(name, names[name][0], names[name][1], processors.get(name)) for name in order)
    columns = internals.result_columns(compiled)
    keys = tuple(str(column.keyname) for column in columns)
    result_processors = tuple(internals.result_processor(column.type, dialect) for column in columns)
    custom_plan = style == "dollar" and " LIKE " in sql
    return Prepared(sql, style, binds, keys, result_processors, custom_plan=custom_plan)


async def run(
    database: Database,
    style: str,
    sql: str,
    arguments: Any,
    quick: bool = False,
    custom_plan: bool = False,
) -> Sequence[Sequence[Any]]:
    """Runs on the request's connection (the one `database.connection()` gives this task); a quick
    qmark read is first offered to the database's accelerator (SQLite: read on the loop's thread).

    `custom_plan` (asyncpg): PostgreSQL plans this statement for the values it is given, never with
    the generic plan it may keep for a prepared statement after five runs. A `LIKE` on a parameter
    needs that: not knowing the word, the generic plan of a page walks the key's index and tests every
    row (18 s for a word found nowhere in a million rows), where the plan for the word reads its few
    rows from the trigram index (docs/performance.md, "The search index on PostgreSQL")."""
    turn = NO_TURN
    if style == "qmark":
        accelerator = accelerator_of(database)
        if quick:
            rows = accelerator.read_quick(database, sql, arguments)
            if rows is not None:
                return rows
        turn = accelerator.thread_turn(database)  # SQLite: a few reads on threads at a time (Tails)
    connection = database.connection()
    async with turn, connection, internals.query_lock(connection) or contextlib.nullcontext():
        raw = internals.driver(connection)
        if style == "qmark":
            return await raw.execute_fetchall(sql, arguments)
        if style == "dollar":
            if not custom_plan:
                return await raw.fetch(sql, *arguments)
            # Nothing of it outlives the statement: a host may give connections back to the pool
            # without asyncpg's reset (docs/deployment.md).
            await raw.execute("SET plan_cache_mode = force_custom_plan")
            try:
                rows = await raw.fetch(sql, *arguments)
            except Exception:
                # In a transaction its rollback undoes the SET; a closed connection keeps nothing.
                if not raw.is_in_transaction() and not raw.is_closed():
                    await raw.execute("RESET plan_cache_mode")
                raise
            await raw.execute("RESET plan_cache_mode")
            return rows
        async with raw.cursor() as cursor:
            await cursor.execute(sql, arguments)
            return await cursor.fetchall()


async def execute(database: Database, prepared: Prepared, arguments: Any, inserts: bool = False) -> Any:
    """Run a write on the request's connection; of an INSERT (`inserts`), the new row's key: the value
    it returns (asyncpg: `INSERT … RETURNING`), else the driver's last row id. On SQLite the statement
    (and the key) takes one trip to the connection's thread, not the three of a cursor's."""
    connection = database.connection()
    async with connection, internals.query_lock(connection) or contextlib.nullcontext():
        raw = internals.driver(connection)
        if prepared.style == "qmark":
            if not inserts:
                await raw.execute_fetchall(prepared.sql, arguments)
                return None
            row = await raw.execute_insert(prepared.sql, arguments)
            return None if row is None else row[0]
        if prepared.style == "dollar":
            return await raw.fetchval(prepared.sql, *arguments)
        async with raw.cursor() as cursor:
            await cursor.execute(prepared.sql, arguments)
            return cursor.lastrowid if inserts else None


class FetchedRow(dict[str, Any]):
    """A fetched row read by column name, also as `row._mapping` like a SQLAlchemy or `databases` row."""

    @property
    def _mapping(self) -> FetchedRow:
        return self


async def fetch_fixed(
    database: Database, caches: Caches, statement: sa.Select[Any], values: Mapping[str, Any]
) -> list[FetchedRow]:
    """Rows of a statement whose only variables are named `sa.bindparam`s, compiled once per API object.

    For the statements every request runs (the token look-up): `statement` must be the same object
    each time (a module constant), `values` gives each bindparam by name.
    """
    prepared = _fixed_prepared(database, caches, statement, values)
    if prepared is None:  # this statement cannot be kept compiled
        return [FetchedRow(row._mapping) for row in await database.fetch_all(statement, dict(values))]
    rows = await _kept_while_unchanged(database, caches, prepared, values, prepared.sql, _as_tuples)
    return [FetchedRow(prepared.processed(raw)) for raw in rows]


async def fetch_fixed_built(
    database: Database,
    caches: Caches,
    statement: sa.Select[Any],
    values: Mapping[str, Any],
    build: Callable[[FetchedRow], T],
) -> list[T]:
    """`build(row)` for each row of `fetch_fixed`, kept per row as the database gave it: a row read
    again (the same token, the same versions) is not converted and built again. `build` must be a
    pure function of the row. While SQLite's data version stands, the built rows themselves are kept
    (`_kept_while_unchanged`): the usual request looks its token up in one step."""
    prepared = _fixed_prepared(database, caches, statement, values)
    if prepared is None:
        return [build(row) for row in await fetch_fixed(database, caches, statement, values)]

    def built(rows: Sequence[Sequence[Any]]) -> tuple[T, ...]:
        made = []
        for raw in rows:
            key = (id(statement), build, tuple(raw))
            found = caches.built_rows.get(key)
            if found is None:
                found = caches.built_rows.put(key, build(FetchedRow(prepared.processed(raw))))
            made.append(found)
        return tuple(made)  # type: ignore[arg-type]

    kind = (id(statement), build)
    return list(await _kept_while_unchanged(database, caches, prepared, values, kind, built))


async def _kept_while_unchanged(
    database: Database,
    caches: Caches,
    prepared: Prepared,
    values: Mapping[str, Any],
    kind: Hashable,
    make: Callable[[Sequence[Sequence[Any]]], tuple[R, ...]],
) -> tuple[R, ...]:
    """`make(rows)` of a constant query's driver rows. Where the database has a version that moves
    with every commit of any connection (SQLite's `PRAGMA data_version`), what `make` made at a
    version is kept with it (`kind` says what that is: the rows as tuples, or built rows) and given
    again while it has not moved: nothing was written anywhere, so the answer is the same
    (docs/performance.md, "What a process keeps"). The version is read before the query, so what is
    kept is never older than its version."""
    arguments = prepared.arguments(values)
    version = accelerator_of(database).steady_version(database)
    if version is None or not isinstance(arguments, tuple):
        return make(await run(database, prepared.style, prepared.sql, arguments, prepared.quick))
    key = (kind, arguments, version)
    found = caches.rows_at_data_version.get(key)
    if found is None:
        rows = await run(database, prepared.style, prepared.sql, arguments, prepared.quick)
        found = caches.rows_at_data_version.put(key, make(rows))
    return found  # type: ignore[return-value]


def _as_tuples(rows: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    return tuple(tuple(row) for row in rows)


def _fixed_prepared(
    database: Database, caches: Caches, statement: sa.Select[Any], values: Mapping[str, Any]
) -> Prepared | None:
    prepared = caches.constant_statements.get(id(statement))
    if prepared is None:
        # The parameters named in `values` vary; every other one is a constant of the statement.
        slots = {
            parameter.key: (parameter.key, None)
            for parameter in named_binds(statement)
            if parameter.key in values
        }
        compiled = prepare(database, statement, slots, constants=True)
        prepared = caches.constant_statements.put(id(statement), compiled or NOT_REUSABLE)
    return prepared if isinstance(prepared, Prepared) else None


def named_binds(statement: sa.ClauseElement) -> list[sa.BindParameter[Any]]:
    found: list[sa.BindParameter[Any]] = []
    sa.sql.visitors.traverse(statement, {}, {"bindparam": found.append})
    return found
