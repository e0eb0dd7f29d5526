"""The compile stage of a read: a plan in, one `CompiledRead` out, kept in the plan cache's entry.

A `CompiledRead` holds what is worked out once for one plan: the plan as read, its values in the
order the compiler binds them, its rendering, and its compiled statements with their slots (page
and count, a cursor page's, a deep page's seek statements; a show's). It is made once when a plan
is made (api/reads.py keeps it by object and query string in `caches.plans`), and the request path
only runs what it holds (query/executor.py). Statements are shared between the plans of one shape
(the same fields, filters with the same operators and number of values, search terms, order and
relations) through `caches.statements`: the first plan of a shape compiles, with a recording
`Binder` (query/parameters.py) that says which bound parameter carries which plan value; later plans
of that shape only convert their values and run the compiled SQL (database/statements.py). A shape
that does not compile to reusable SQL (an object with a `query` narrowing, which may read the clock)
is run the ordinary way every time. docs/architecture.md, "The compiled read", draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar, cast

import sqlalchemy as sa
from databases import Database

from pb_headless.constructor.indexes import key_order_index
from pb_headless.database.accelerators import accelerator_of
from pb_headless.database.backends import Backend
from pb_headless.database.caches import KEPT_PLAN_QUERY, Caches
from pb_headless.database.positions import STEP
from pb_headless.database.slots import AFTER, CURSOR, LIMIT, OFFSET, SEARCH
from pb_headless.database.sqlite.trigrams import MATCH_KEY, match_query
from pb_headless.database.statements import (
    NOT_REUSABLE,
    ListStatements,
    Prepared,
    SeekStatements,
    paging_slots,
    prepare,
)
from pb_headless.query.compiler import (
    AFTER_KEY,
    DEFERRED_OFFSET,
    compile_list,
    compile_seek,
    compile_show,
    in_key_order,
    is_deferred,
    search_match,
)
from pb_headless.query.grammar import ParsedQuery
from pb_headless.query.parameters import Binder
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.query.render import Render
from pb_headless.registry.spec import ObjectSpec

P = TypeVar("P", bound=ShowPlan)
KEPT_PLAN_VALUES = 16  # values a kept read holds (docs/performance.md, "What a process keeps")
DEEP_FROM = max(STEP, DEFERRED_OFFSET)  # from this offset on, a page may start from a noted key
_UNASKED: Any = object()  # a statement not yet looked for (a deep page's, at its first deep page)


@dataclass(frozen=True, slots=True)
class Reader:
    """Where a read runs: the host's database, its backend (what differs between databases) and the
    API object's caches."""

    database: Database
    backend: Backend
    caches: Caches


class CompiledRead(Generic[P]):
    """One plan, compiled: what a request of it runs. Made by `compile_read`; only the seek
    statements, which only a deep page needs, are looked for at the first deep page."""

    __slots__ = (
        "_values",
        "cursor",
        "plan",
        "read",
        "render",
        "seek",
        "shaped",
        "show",
        "spec",
        "statements",
    )

    def __init__(self, spec: ObjectSpec, plan: P) -> None:
        self.spec = spec
        self.plan = plan
        # A page that must say itself whether more follow reads one row more; the statements of its
        # shape are those of an offset page (a cursor adds its seek condition to the page only).
        read = plan
        if isinstance(plan, ListPlan) and plan.reads_past and plan.limit > 0:
            read = replace(plan, limit=plan.limit + 1)
        self.read: Any = read
        self.shaped: Any = replace(read, cursor=None) if isinstance(read, ListPlan) else read
        values = _plan_values(read, None) if isinstance(read, ListPlan) else None
        # A long `in` list is worked out again on each request: kept reads stay small.
        self._values = values if values is not None and len(values) <= KEPT_PLAN_VALUES else None
        self.render: Render = plan.render
        self.statements: Any = None  # ListStatements (a list), or None: not reusable, or not yet
        self.show: Any = _UNASKED  # a show's Prepared, at its first key (None: not reusable)
        self.cursor: Prepared | None = None
        self.seek: Any = _UNASKED

    @property
    def values(self) -> dict[int | str, Any]:
        """The values of the plan as read, in the order the compiler binds them (with the page's
        LIMIT and OFFSET and a cursor's position): callers only read them."""
        found = self._values
        return found if found is not None else _plan_values(self.read, None)

    @property
    def weight(self) -> int:
        """The bytes it holds, roughly (`caches.plans` bounds their sum): the plan with its query
        string, and the statements it holds (shared with `caches.statements`, counted here too)."""
        return (
            self.plan.weight
            + int(getattr(self.statements, "weight", 0))
            + (0 if self.cursor is None else self.cursor.weight)
        )


def compile_read(reader: Reader, spec: ObjectSpec, plan: P) -> CompiledRead[P]:
    """The plan compiled for `reader`'s database: its statements, compiled on first use per shape.
    A list plan that answers 422 (`details`) is not compiled."""
    compiled = CompiledRead(spec, plan)
    if not isinstance(plan, ListPlan) or plan.details:  # a show's statement comes with its first key
        return compiled
    shaped = compiled.shaped
    compiled.statements = list_statements(reader, spec, shaped)
    if plan.cursor is not None and plan.limit > 0:
        compiled.cursor = cursor_statement(reader, spec, compiled.read)
    return compiled


def kept_read(
    reader: Reader,
    spec: ObjectSpec,
    plan: Callable[[ObjectSpec, ParsedQuery], P],
    written: bytes,
    parsed: Callable[[], ParsedQuery],
) -> CompiledRead[P]:
    """The compiled read of the query string `written` (`parsed` reads it) for this object, kept in
    `caches.plans` by object, planner and query string as written: planning is pure
    (query/planner.py) and compiling depends on the plan's shape alone, so one made once is used
    again. A plan that answers 422 is made again each time, as is one of a query string past
    `KEPT_PLAN_QUERY`. Any reader of records of the API's shapes finds the API's own entries here
    (a show without parameters: `plan_show` and `b""`)."""
    key = (spec, plan, written)
    found: CompiledRead[P] | None = reader.caches.plans.get(key)  # type: ignore[assignment]
    if found is not None:
        return found
    compiled = compile_read(reader, spec, plan(spec, parsed()))
    if not getattr(compiled.plan, "details", None) and len(written) <= KEPT_PLAN_QUERY:
        reader.caches.plans.put(key, compiled)
    return compiled


def deep_statements(reader: Reader, compiled: CompiledRead[ListPlan]) -> SeekStatements | None:
    """A deep page's seek statements, when the database can start it from a noted key
    (database/positions.py) and the plan reads in key order: looked for once per compiled read."""
    if compiled.seek is _UNASKED:
        spec, plan = compiled.spec, compiled.read
        usable = (
            accelerator_of(reader.database).deep_pages
            and plan.offset >= DEEP_FROM
            and plan.limit > 0
            and in_key_order(spec, plan)
            and search_match(spec, plan) is None
        )
        compiled.seek = seek_statements(reader, spec, plan) if usable else None
    return cast("SeekStatements | None", compiled.seek)


def show_prepared(reader: Reader, compiled: CompiledRead[Any], pk_value: Any) -> Prepared | None:
    """A show's statement: looked for at its first key, then held by the compiled read."""
    if compiled.show is _UNASKED:
        compiled.show = show_statement(reader, compiled.spec, compiled.plan, pk_value)
    return cast("Prepared | None", compiled.show)


def ordinary_page(reader: Reader, compiled: CompiledRead[ListPlan]) -> sa.Select[Any]:
    """The page statement of a read whose statements are not kept compiled (a `query` narrowing, or
    a cursor page of a shape that is not reusable), compiled for this request."""
    return compile_list(compiled.spec, compiled.read, reader.backend)[0]


def ordinary_count(reader: Reader, compiled: CompiledRead[ListPlan], capped: bool = True) -> sa.Select[Any]:
    """The count of the read's shape without its cursor, compiled for this request: where the
    statements are not kept compiled, and uncapped for a database's estimate."""
    return compile_list(compiled.spec, compiled.shaped, reader.backend, capped=capped)[1]


def ordinary_show(reader: Reader, compiled: CompiledRead[Any], pk_value: Any) -> sa.Select[Any]:
    """A show's statement for this key, compiled for this request (not reusable)."""
    return compile_show(compiled.spec, compiled.plan, pk_value, reader.backend)


def plan_values(plan: ShowPlan, pk_value: Any = None) -> dict[int | str, Any]:
    """The plan's values in the order the compiler binds them: filters in order, then search terms."""
    return _plan_values(plan, pk_value)


def _plan_values(plan: ShowPlan, pk_value: Any) -> dict[int | str, Any]:
    values: list[Any] = [] if pk_value is None else [pk_value]
    for condition in plan.conditions if isinstance(plan, ListPlan) else ():
        if condition.operator == "null":
            continue
        if condition.operator in ("in", "nin", "between"):
            values.extend(condition.value)
        else:
            values.append(condition.value)
    if isinstance(plan, ListPlan):
        values.extend(plan.search)
    slots: dict[int | str, Any] = dict(enumerate(values))
    if isinstance(plan, ListPlan):
        slots[LIMIT], slots[OFFSET], slots[SEARCH] = plan.limit, plan.offset, plan.search
        for index, value in enumerate(() if plan.cursor is None else plan.cursor.values):
            slots[(CURSOR, index)] = value  # type: ignore[index]
    return slots


def list_statements(reader: Reader, spec: ObjectSpec, plan: ListPlan) -> ListStatements | None:
    """The page and count statements of this plan's shape, compiled on first use; None: not reusable."""
    key = ("list", *_list_shape(reader.backend, spec, plan))
    return _cached(reader.caches, spec, key, lambda: _prepare_list(reader, spec, plan), plan)


def _list_shape(backend: Backend, spec: ObjectSpec, plan: ListPlan) -> tuple[Any, ...]:
    """What decides a list statement's SQL beside its values (shared by offset and cursor pages)."""
    return (backend.name, _shape(plan), is_deferred(spec, plan, backend), search_match(spec, plan))


def cursor_statement(reader: Reader, spec: ObjectSpec, plan: ListPlan) -> Prepared | None:
    """A cursor page's statement, compiled on first use per shape: the list's shape, the direction,
    and which of the position's values are NULL (they change the SQL, not only its values)."""
    cursor = plan.cursor
    assert cursor is not None
    key = (
        "cursor",
        *_list_shape(reader.backend, spec, plan),
        cursor.backwards,
        tuple(value is None for value in cursor.values),
    )
    return _cached(reader.caches, spec, key, lambda: _prepare_cursor(reader, spec, plan), plan)


def seek_statements(reader: Reader, spec: ObjectSpec, plan: ListPlan) -> SeekStatements | None:
    key = ("seek", reader.backend.name, _shape(plan))
    return _cached(reader.caches, spec, key, lambda: _prepare_seek(reader, spec, plan), plan)


def show_statement(reader: Reader, spec: ObjectSpec, plan: ShowPlan, pk_value: Any) -> Prepared | None:
    """A show's statement, compiled on first use per shape (with the first key asked for: a key is a
    value of the statement like any other)."""
    key = ("show", reader.backend.name, _shape(plan))
    return _cached(reader.caches, spec, key, lambda: _prepare_show(reader, spec, plan, pk_value))


def _cached(
    caches: Caches, spec: ObjectSpec, key: tuple[Any, ...], build: Callable[[], Any], plan: Any = None
) -> Any:
    if spec.query is not None or (isinstance(plan, ListPlan) and plan.narrowings):
        return None  # `query` is called on every compile: its SQL may differ from one request to the next
    # Keyed by the spec itself: a spec of an older registry version ages out like any other shape.
    found = caches.statements.get((spec, key))
    if found is None:
        found = caches.statements.put((spec, key), build() or NOT_REUSABLE)
        caches.note_compiled()
    return None if found is NOT_REUSABLE else found


def _shape(plan: ShowPlan) -> tuple[Any, ...]:
    """What the statements of a plan depend on (worked out when its read is compiled)."""
    if not isinstance(plan, ListPlan):
        return (tuple(f.name for f in plan.fields), tuple(relation.name for relation in plan.relations))
    conditions = tuple(
        (
            condition.name,
            str(condition.operator),
            condition.value
            if condition.operator == "null"
            else len(condition.value)
            if condition.operator in ("in", "nin", "between")
            else None,
        )
        for condition in plan.conditions
    )
    return (
        tuple(field.name for field in plan.fields),
        tuple(relation.name for relation in plan.relations),
        conditions,
        len(plan.search),
        tuple((order.field.name, order.descending) for order in plan.order),
    )


def _quick(plan: ListPlan) -> bool:
    """A page read on the loop's thread where the database can (SQLite): never one that tests text,
    as folding one long value is one step that no budget can interrupt, however long the text
    (docs/performance.md, "Reads on the loop")."""
    return not plan.search and all(condition.operator != "like" for condition in plan.conditions)


def _prepare_list(reader: Reader, spec: ObjectSpec, plan: ListPlan) -> ListStatements | None:
    binder = Binder(reader.backend, recording=True)
    page, count = compile_list(spec, plan, binder)
    slots = plan_slots(binder.parameters, _plan_values(plan, None))
    if slots is None:
        return None
    slots[MATCH_KEY] = (SEARCH, match_query)  # present only when the search index gives candidates
    page_slots = {**slots, **paging_slots(page)}
    prepared_page = prepare(reader.database, page, page_slots)
    prepared_count = prepare(reader.database, count, slots)
    if prepared_page is None or prepared_count is None:
        return None
    # A count reads every matching row: never on the loop's thread (SQLite's count of a whole table is
    # one step that no budget can interrupt).
    return ListStatements(replace(prepared_page, quick=_quick(plan)), replace(prepared_count, quick=False))


def _prepare_cursor(reader: Reader, spec: ObjectSpec, plan: ListPlan) -> Prepared | None:
    binder = Binder(reader.backend, recording=True)
    page, _ = compile_list(spec, plan, binder)
    slots = plan_slots(binder.parameters, _plan_values(plan, None))
    if slots is None:
        return None
    slots[MATCH_KEY] = (SEARCH, match_query)
    prepared = prepare(reader.database, page, {**slots, **paging_slots(page)})
    return None if prepared is None else replace(prepared, quick=_quick(plan))


def _prepare_seek(reader: Reader, spec: ObjectSpec, plan: ListPlan) -> SeekStatements | None:
    binder = Binder(reader.backend, recording=True)
    statements = compile_seek(spec, plan, binder, key_order_index(reader.database, spec.table))
    slots = plan_slots(binder.parameters, _plan_values(plan, None))
    if slots is None:
        return None
    slots[AFTER_KEY] = (AFTER, None)
    prepared = [
        prepare(reader.database, statement, {**slots, **paging_slots(statement)}) for statement in statements
    ]
    if any(found is None for found in prepared):
        return None
    return SeekStatements(*cast("list[Prepared]", prepared))


def _prepare_show(reader: Reader, spec: ObjectSpec, plan: ShowPlan, key: Any) -> Prepared | None:
    binder = Binder(reader.backend, recording=True)
    statement = compile_show(spec, plan, key, binder)
    slots = plan_slots(binder.parameters, _plan_values(plan, key))
    if slots is None:
        return None
    return prepare(reader.database, statement, {**slots, **paging_slots(statement, fixed=True)})


def plan_slots(notes: Sequence[Any], values: Mapping[int | str, Any]) -> dict[str, tuple[Any, Any]] | None:
    """Parameter key → (slot, conversion), when the compiler bound exactly the plan's values in order
    (and a cursor's values, noted with their own slots, exactly those of the position)."""
    positional = [values[index] for index in range(len(values)) if index in values]
    ordered = [note for note in notes if note.slot is None]
    if len(ordered) != len(positional):
        return None
    slots: dict[str, tuple[Any, Any]] = {}
    for index, (note, value) in enumerate(zip(ordered, positional, strict=True)):
        if note.value is not value and note.value != value:
            return None
        slots[note.parameter.key] = (index, note.convert)
    for note in notes:
        if note.slot is None:
            continue
        if note.slot not in values or (
            note.value is not values[note.slot] and note.value != values[note.slot]
        ):
            return None
        slots[note.parameter.key] = (note.slot, note.convert)
    return slots
