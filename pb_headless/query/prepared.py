"""The compiled statements of a plan's shape, kept in the API object's caches (database/caches.py).

The first plan of a shape (the same fields, filters with the same operators and number of values,
search terms, order and relations) compiles as always, while `parameters.recording()` notes which
bound parameter carries which plan value; later plans of that shape only convert their values and
run the compiled SQL (database/statements.py). A shape that does not compile to reusable SQL (an
object with a `query` narrowing, which may read the clock) is run the ordinary way every time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from databases import Database

from pb_headless.constructor.indexes import key_order_index
from pb_headless.database.caches import Caches
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
    compile_list,
    compile_seek,
    compile_show,
    is_deferred,
    search_match,
)
from pb_headless.query.parameters import recording
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.registry.spec import ObjectSpec

KEPT_PLAN_VALUES = 16  # values a list plan keeps with it (docs/performance.md, "What a process keeps")


def plan_values(plan: ShowPlan, pk_value: Any = None) -> dict[int | str, Any]:
    """The plan's values in the order the compiler binds them: filters in order, then search terms.
    A list plan's are worked out once per plan (`ShowPlan.derived`): callers only read them."""
    if pk_value is None and isinstance(plan, ListPlan):
        derived = plan.derived
        found: dict[int | str, Any] | None = derived.get("values")
        if found is None:
            found = _plan_values(plan, None)
            if len(found) <= KEPT_PLAN_VALUES:  # a long `in` list is worked out again: plans stay small
                derived["values"] = found
        return found
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


def list_statements(
    database: Database, caches: Caches, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> ListStatements | None:
    """The page and count statements of this plan's shape, compiled on first use; None: not reusable."""
    key = ("list", *_list_shape(spec, plan, dialect))
    return _cached(caches, spec, key, lambda: _prepare_list(database, spec, plan, dialect), plan)


def _list_shape(spec: ObjectSpec, plan: ListPlan, dialect: str) -> tuple[Any, ...]:
    """What decides a list statement's SQL beside its values (shared by offset and cursor pages)."""
    return (dialect, _shape_of(plan), is_deferred(spec, plan, dialect), search_match(spec, plan, dialect))


def cursor_statement(
    database: Database, caches: Caches, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> Prepared | None:
    """A cursor page's statement, compiled on first use per shape: the list's shape, the direction,
    and which of the position's values are NULL (they change the SQL, not only its values)."""
    cursor = plan.cursor
    assert cursor is not None
    key = (
        "cursor",
        *_list_shape(spec, plan, dialect),
        cursor.backwards,
        tuple(value is None for value in cursor.values),
    )
    return _cached(caches, spec, key, lambda: _prepare_cursor(database, spec, plan, dialect), plan)


def seek_statements(
    database: Database, caches: Caches, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> SeekStatements | None:
    key = ("seek", dialect, _shape_of(plan))
    return _cached(caches, spec, key, lambda: _prepare_seek(database, spec, plan, dialect), plan)


def show_statement(
    database: Database, caches: Caches, spec: ObjectSpec, plan: ShowPlan, pk_value: Any, dialect: str
) -> Prepared | None:
    key = ("show", dialect, _shape_of(plan))
    return _cached(caches, spec, key, lambda: _prepare_show(database, spec, plan, pk_value, dialect))


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


def _shape_of(plan: ShowPlan) -> tuple[Any, ...]:
    """What the statements of a plan depend on; worked out once per plan (`ShowPlan.derived`)."""
    derived = plan.derived
    shape = derived.get("shape")
    if shape is None:
        shape = derived["shape"] = _shape(plan)
    return shape


def _shape(plan: ShowPlan) -> tuple[Any, ...]:
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


def _prepare_list(
    database: Database, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> ListStatements | None:
    with recording() as notes:
        page, count = compile_list(spec, plan, dialect)
    values = plan_values(plan)
    slots = plan_slots(notes, values)
    if slots is None:
        return None
    slots[MATCH_KEY] = (SEARCH, match_query)  # present only when the search index gives candidates
    page_slots = {**slots, **paging_slots(page)}
    prepared_page = prepare(database, page, page_slots)
    prepared_count = prepare(database, count, slots)
    if prepared_page is None or prepared_count is None:
        return None
    # A count reads every matching row: never on the loop's thread (SQLite's count of a whole table is
    # one step that no budget can interrupt). Nor a page that tests text: folding one long value is
    # one step too, however long the text (docs/performance.md, "Reads on the loop").
    quick = not plan.search and all(condition.operator != "like" for condition in plan.conditions)
    return ListStatements(replace(prepared_page, quick=quick), replace(prepared_count, quick=False))


def _prepare_cursor(database: Database, spec: ObjectSpec, plan: ListPlan, dialect: str) -> Prepared | None:
    with recording() as notes:
        page, _ = compile_list(spec, plan, dialect)
    slots = plan_slots(notes, plan_values(plan))
    if slots is None:
        return None
    slots[MATCH_KEY] = (SEARCH, match_query)
    prepared = prepare(database, page, {**slots, **paging_slots(page)})
    if prepared is None:
        return None
    # On the loop's thread under the rule of offset pages (`_prepare_list`).
    quick = not plan.search and all(condition.operator != "like" for condition in plan.conditions)
    return replace(prepared, quick=quick)


def _prepare_seek(
    database: Database, spec: ObjectSpec, plan: ListPlan, dialect: str
) -> SeekStatements | None:
    with recording() as notes:
        statements = compile_seek(spec, plan, dialect, key_order_index(database, spec.table))
    slots = plan_slots(notes, plan_values(plan))
    if slots is None:
        return None
    slots[AFTER_KEY] = (AFTER, None)
    prepared = [
        prepare(database, statement, {**slots, **paging_slots(statement)}) for statement in statements
    ]
    if any(found is None for found in prepared):
        return None
    return SeekStatements(*cast("list[Prepared]", prepared))


def _prepare_show(
    database: Database, spec: ObjectSpec, plan: ShowPlan, pk_value: Any, dialect: str
) -> Prepared | None:
    with recording() as notes:
        statement = compile_show(spec, plan, pk_value, dialect)
    slots = plan_slots(notes, plan_values(plan, pk_value))
    if slots is None:
        return None
    return prepare(database, statement, {**slots, **paging_slots(statement, fixed=True)})


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
