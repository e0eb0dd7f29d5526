"""Turns list and show plans into SQLAlchemy Core statements for one database (its backend's facts).

Every statement starts from the same narrowed base: the object's table, only published rows, then
the declaration's `query`. `query` is called on every compile, never cached: it may read the clock
or other state that changes between requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from operator import eq, ge, gt, le, lt, ne
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import operators as sql_operators

from pb_headless.database.backends import Backend
from pb_headless.database.dialect import casefold
from pb_headless.database.slots import CURSOR
from pb_headless.database.sqlite.trigrams import MATCH_KEY, match_query
from pb_headless.fields import FieldKind
from pb_headless.query.limits import SEARCH_COUNT_EXACT
from pb_headless.query.operators import Operator
from pb_headless.query.parameters import Binder, binder_for
from pb_headless.query.planner import Condition, ListPlan, Ordering, ShowPlan
from pb_headless.query.seek import seek_condition
from pb_headless.registry.spec import FieldSpec, ObjectSpec, RelationSpec

# Not a backslash: MariaDB reads a backslash inside the `ESCAPE '...'` literal as an escape itself.
LIKE_ESCAPE = "!"
RELATION_KEY = "pb_relation_key"  # the label of the matched remote column in a relation's rows
RELATION_POSITION = "pb_relation_position"  # a to-many row's place among the rows of its key
DEFERRED_OFFSET = 1000  # from this offset on, a page is read through a deferred join
AFTER_KEY = "pb_after"  # the remembered key a deep page starts from (compile_seek)

_COMPARISONS: dict[Operator, Callable[[Any, Any], sa.ColumnElement[Any]]] = {
    Operator.EQ: eq,
    Operator.NE: ne,
    Operator.GT: gt,
    Operator.GTE: ge,
    Operator.LT: lt,
    Operator.LTE: le,
}


Facts = Binder | Backend | type[Backend] | str  # the database a statement is for (query/parameters.py)


def compile_list(
    spec: ObjectSpec, plan: ListPlan, dialect: Facts, capped: bool = True
) -> tuple[sa.Select[Any], sa.Select[Any]]:
    """The page statement and the statement counting every matching row.

    The count wraps the filtered select as a subquery, so joins, DISTINCT or GROUP BY that `query`
    may add count exactly the rows the pages show. A search's count (`capped`) stops one row past
    `SEARCH_COUNT_EXACT`: a larger total is estimated instead (query/executor.py). `dialect`: the
    backend (or its name), or a recording `Binder` that notes the parameters for the statement cache.
    """
    binder = binder_for(dialect)
    conditions = _conditions(spec, plan, binder)
    columns = _columns(spec, plan)
    filtered = _narrowed(spec, columns).where(*conditions).order_by(None)
    orderings = [_ordering(order) for order in plan.order]
    page_orderings = orderings
    match = search_match(spec, plan)
    if match is not None:
        # The search index's candidates drive the count, and the page when it is in key order
        # (candidates come in key order, so the page stops at its last record); under another order
        # every candidate would be read and sorted, which a table read in that order beats for common terms.
        index = sa.table(match, sa.column("rowid"), sa.column(match))
        candidates = _narrowed(
            spec, columns, _DrivingJoin(index, spec.table, spec.pk.column == index.c.rowid)
        )
        candidates = candidates.where(
            index.c[match].op("MATCH")(sa.bindparam(MATCH_KEY, match_query(plan.search), sa.String())),
            *conditions,
        )
        count = _count_of(candidates, plan, capped)
        if in_key_order(spec, plan):
            filtered = candidates
            page_orderings = [
                index.c.rowid.desc() if o.descending else index.c.rowid.asc() for o in plan.order
            ]
    else:
        count = _count_of(filtered, plan, capped)
    if plan.cursor is not None:  # a keyset page: the rows past the position, read from there
        seek = seek_condition(plan.order, plan.cursor, binder.facts, _comparable, _cursor_bound(plan, binder))
        filtered = filtered.where(seek)
        page_orderings, orderings = _flipped(page_orderings, plan), _flipped(orderings, plan)
    if is_deferred(spec, plan, binder.facts):
        return _deferred_page(spec, plan, filtered, page_orderings, orderings), count
    page = filtered.order_by(*page_orderings).limit(plan.limit).offset(plan.offset)
    return page, count


def _count_of(rows: sa.Select[Any], plan: ListPlan, capped: bool) -> sa.Select[Any]:
    if capped and plan.search:  # a constant in the SQL, not a parameter: it is no value of the plan
        rows = rows.limit(sa.literal_column(str(SEARCH_COUNT_EXACT + 1), sa.Integer))
    return sa.select(sa.func.count()).select_from(rows.subquery())


def compile_seek(
    spec: ObjectSpec, plan: ListPlan, dialect: Facts, index: str | None = None
) -> tuple[sa.Select[Any], ...]:
    """For a deep page in key order (database/positions.py), the statements that count rows from a
    remembered key instead of the first: the key `offset` rows from the start; the key `offset` rows
    after the key `AFTER_KEY`; and the page `offset` rows after that key. `index`: on MariaDB, the
    index the keys are read from, named in the statements (constructor/indexes.py `key_order_index`)."""
    key = spec.pk.column
    ordering = key.desc() if plan.order[0].descending else key.asc()
    after = sa.bindparam(AFTER_KEY, None, key.type)
    filtered = _narrowed(spec, [key]).where(*_conditions(spec, plan, binder_for(dialect))).order_by(None)
    if index is not None:
        filtered = filtered.with_hint(spec.table, f"FORCE INDEX (`{index}`)", "mysql")
    following = filtered.where(key < after if plan.order[0].descending else key > after)
    return (
        filtered.order_by(ordering).limit(plan.limit).offset(plan.offset),
        following.order_by(ordering).limit(plan.limit).offset(plan.offset),
        _deferred_page(spec, plan, following, [ordering], [ordering]),
    )


def _conditions(spec: ObjectSpec, plan: ListPlan, binder: Binder) -> tuple[sa.ColumnElement[Any], ...]:
    """The plan's filters and search terms, as WHERE conditions."""
    return (
        *(_condition(condition, binder) for condition in plan.conditions),
        *_search(spec.search_texts, plan.search, binder),
    )


def in_key_order(spec: ObjectSpec, plan: ListPlan) -> bool:
    return all(order.field.column is spec.pk.column for order in plan.order)


def search_match(spec: ObjectSpec, plan: ListPlan) -> str | None:
    """The search index that gives this plan's candidates (its name), if one does: a spec has one only
    where its database keeps it (the accelerator's `ensure_search_index`)."""
    if spec.search_index is None or spec.query is not None or not plan.search:
        return None
    return spec.search_index if match_query(plan.search) is not None else None


class _DrivingJoin(sa.sql.expression.Join):
    """`a CROSS JOIN b ON …`: SQLite keeps `a` (the search index) as the outer loop, as asked. Left to
    choose, it scans the table by an index of its own and asks the search index once per row."""

    inherit_cache = True


@compiles(_DrivingJoin, "sqlite")
def _cross_join(element: _DrivingJoin, compiler: Any, **kw: Any) -> str:
    sides = {**kw, "asfrom": True}
    left, right = compiler.process(element.left, **sides), compiler.process(element.right, **sides)
    on = compiler.process(element.onclause, **{key: value for key, value in kw.items() if key != "asfrom"})
    return f"{left} CROSS JOIN {right} ON {on}"


def is_deferred(spec: ObjectSpec, plan: ListPlan, facts: Backend | type[Backend]) -> bool:
    """Whether the page is found by its keys first (a deferred join). A deep page would otherwise
    read every skipped row in full, while the keys alone come from an index; and MariaDB, which
    cannot read an index backwards for a mixed order (`-published_at` with the key ascending), would
    otherwise sort whole rows, TEXT columns included, instead of keys."""
    if spec.query is not None or len(spec.table.primary_key.columns) != 1:
        return False
    if plan.offset >= DEFERRED_OFFSET:
        return True
    return facts.sorts_rows_for_mixed_order and any(
        order.field.column is not spec.pk.column for order in plan.order
    )


def _deferred_page(
    spec: ObjectSpec,
    plan: ListPlan,
    filtered: sa.Select[Any],
    inner: Sequence[sa.UnaryExpression[Any]],
    orderings: Sequence[sa.UnaryExpression[Any]],
) -> sa.Select[Any]:
    """`SELECT … FROM t JOIN (SELECT key FROM t WHERE … ORDER BY … LIMIT … OFFSET …) ON key`: a join
    rather than `key IN (…)`, which MariaDB refuses with a LIMIT inside. `inner` orders the keys (the
    search index's own order, when it drives), `orderings` the page."""
    key = spec.pk.column
    keys = filtered.with_only_columns(key).order_by(*inner).limit(plan.limit).offset(plan.offset)
    found = keys.subquery("pb_page")
    joined = spec.table.join(found, key == found.c[key.name])
    return sa.select(*_columns(spec, plan)).select_from(joined).order_by(*orderings)


def compile_show(spec: ObjectSpec, plan: ShowPlan, pk_value: Any, dialect: Facts) -> sa.Select[Any]:
    """One published row by primary key (`pk_value` already converted by the key's kind)."""
    match = _condition(Condition(spec.pk, Operator.EQ, pk_value, "id"), binder_for(dialect))
    return _narrowed(spec, _columns(spec, plan)).where(match).limit(1)


def compile_show_many(spec: ObjectSpec, plan: ShowPlan, keys: Sequence[Any]) -> sa.Select[Any]:
    """The published rows among `keys`, read as `compile_show` reads one (a batch's new records)."""
    return _narrowed(spec, _columns(spec, plan)).where(spec.pk.column.in_(list(keys)))


def compile_selected(spec: ObjectSpec, plan: ListPlan, keys: Sequence[Any], dialect: Facts) -> sa.Select[Any]:
    """`SELECT key FROM t WHERE key IN (:keys) AND <publication rule, query> AND <filters, search>`:
    which of `keys` (already converted) the plan's filters select now, read as a list reads them.
    Bounded by the keys, never a scan of the table (the change feed's page, docs/changes.md)."""
    key = spec.pk.column
    return _narrowed(spec, [key]).where(key.in_(list(keys)), *_conditions(spec, plan, binder_for(dialect)))


def relation_select(relation: RelationSpec, keys: Sequence[Any]) -> sa.Select[Any]:
    """The related rows of a whole page in one statement: those whose key is among `keys`, narrowed
    as the object publishing them narrows its own (published rows, its `query`).

    A to-many relation keeps at most `relation.limit + 1` rows per key, the first in the related
    object's order, numbered by one window function (`ROW_NUMBER() OVER (PARTITION BY key ...)`):
    a row numbered `limit + 1` tells that the relation was cut, and is not shown.
    """
    key = relation.key
    source: sa.FromClause = relation.table
    if relation.through is not None:
        source = relation.table.join(relation.through.table, relation.through.remote == relation.remote)
    columns: list[sa.ColumnElement[Any]] = [field.column for field in relation.fields]
    columns.append(key.label(RELATION_KEY))
    if relation.many:
        order = [column.desc() if descending else column.asc() for column, descending in relation.order]
        columns.append(sa.func.row_number().over(partition_by=key, order_by=order).label(RELATION_POSITION))
    statement = sa.select(*columns).select_from(source).where(key.in_(keys))
    if relation.published is not None:
        statement = statement.where(relation.published == sa.true())
    if relation.query is not None:
        statement = relation.query(statement)
    if not relation.many:
        return statement
    numbered = statement.subquery()
    position = numbered.c[RELATION_POSITION]
    # A stable order, so a to-many array reads the same on every request and every database.
    return (
        sa.select(numbered).where(position <= relation.limit + 1).order_by(numbered.c[RELATION_KEY], position)
    )


def _narrowed(
    spec: ObjectSpec, columns: Sequence[sa.Column[Any]], source: sa.FromClause | None = None
) -> sa.Select[Any]:
    base = (
        sa.select(*columns)
        .select_from(spec.table if source is None else source)
        .where(*spec.published_condition)
    )
    return spec.query(base) if spec.query is not None else base


def _columns(spec: ObjectSpec, plan: ShowPlan) -> list[sa.Column[Any]]:
    """The requested fields, plus the local key of each relation to load (published or not), plus
    the sort fields of a list (its cursors hold their values)."""
    columns = {field.name: field.column for field in plan.fields}
    for relation in plan.relations:
        columns.setdefault(relation.local.name, relation.local)
    for order in getattr(plan, "order", ()):
        columns.setdefault(order.field.name, order.field.column)
    return list(columns.values())


def _condition(condition: Condition, binder: Binder) -> sa.ColumnElement[Any]:
    if condition.relation is not None:
        return _through_relation(condition, condition.relation, binder)
    return _field_condition(condition, binder)


def _through_relation(condition: Condition, relation: RelationSpec, binder: Binder) -> sa.ColumnElement[Any]:
    """A path's condition (`author.name`): whether some related record, narrowed as its object
    narrows its own, satisfies it. A semi-join (`key IN (SELECT …)`), never a join: a row with many
    matching related records is still one row, and the count counts it once; and the database can
    start from the related field's index (docs/query.md, "Indexes for paths"). A to-one path with
    no related record reads as null, so `null=true` asks that no related record holds a value."""
    if condition.operator is Operator.NULL and condition.value and not relation.many:
        held = _related_keys(relation, _field_condition(replace(condition, value=False), binder))
        return sa.or_(relation.local.is_(None), relation.local.not_in(held))
    return relation.local.in_(_related_keys(relation, _field_condition(condition, binder)))


def _related_keys(relation: RelationSpec, test: sa.ColumnElement[Any]) -> sa.Select[Any]:
    """The keys (`relation.key`) of the related rows that pass `test`, as the related object serves
    them: published rows, its `query`. Keys that are NULL are left out, so that `NOT IN` holds."""
    source: sa.FromClause = relation.table
    if relation.through is not None:
        source = relation.table.join(relation.through.table, relation.through.remote == relation.remote)
    statement = sa.select(relation.key).select_from(source).where(test, relation.key.is_not(None))
    if relation.published is not None:
        statement = statement.where(relation.published == sa.true())
    if relation.query is not None:
        statement = relation.query(statement)
    return statement


def _field_condition(condition: Condition, binder: Binder) -> sa.ColumnElement[Any]:
    field, operator, value = condition.field, condition.operator, condition.value
    if operator is Operator.NULL:
        return field.column.is_(None) if value else field.column.is_not(None)
    column = _comparable(field)
    if operator is Operator.LIKE:
        return _contains(field.as_text, _literal_text(value, binder), binder)
    if operator in (Operator.IN, Operator.NIN):
        values = [_bound(field, item, binder) for item in value]
        return column.in_(values) if operator is Operator.IN else column.not_in(values)
    if operator is Operator.BETWEEN:
        return column.between(_bound(field, value[0], binder), _bound(field, value[1], binder))
    return _COMPARISONS[operator](column, _bound(field, value, binder))


def _comparable(field: FieldSpec) -> sa.ColumnElement[Any]:
    # Time, interval, binary, arrays... compare as text: their drivers could not take the client's
    # text as a value.
    if _compares_as_text(field):
        return sa.cast(field.column, sa.String())
    return field.column


def _bound(field: FieldSpec, value: Any, binder: Binder, slot: Any = None) -> sa.ColumnElement[Any]:
    """Every value a plan compares a field with: a parameter of the binder (query/parameters.py),
    noted for the statement cache, which then runs the compiled SQL again with other values."""
    kind = field.kind
    if binder.facts.widens_number_parameters:
        # asyncpg types a parameter after the column (int4, float4) and fails on a wider value;
        # a widened parameter lets PostgreSQL compare across the integer and float types instead.
        if kind is FieldKind.INTEGER:
            return sa.cast(binder.bind(value, sa.BigInteger(), slot=slot), sa.BigInteger())
        if kind is FieldKind.FLOAT:
            return sa.cast(binder.bind(value, sa.Double(), slot=slot), sa.Double())
    if _compares_as_text(field):
        return binder.bind(value, sa.String(), slot=slot)
    if kind is FieldKind.DATETIME and not field.description.timezone:
        # planned values are UTC; naive columns store naive UTC
        return binder.bind(value, field.column.type, _naive, slot)
    return binder.bind(value, field.column.type, slot=slot)


def _cursor_bound(plan: ListPlan, binder: Binder) -> Callable[[FieldSpec, Any], sa.ColumnElement[Any]]:
    """`_bound` for a cursor's values, each noted with its place in the position (`(CURSOR, i)`), so
    a compiled cursor page runs again with another position (query/prepared.py)."""
    places = {ordering.field.name: index for index, ordering in enumerate(plan.order)}

    def bound(field: FieldSpec, value: Any) -> sa.ColumnElement[Any]:
        return _bound(field, value, binder, (CURSOR, places[field.name]))

    return bound


def _naive(value: Any) -> Any:
    return value.replace(tzinfo=None)


def _search(
    expressions: Sequence[sa.ColumnElement[Any]], terms: Sequence[str], binder: Binder
) -> list[sa.ColumnElement[Any]]:
    """Every term must appear in at least one searchable field."""
    clauses = []
    for term in terms:
        pattern = _literal_text(term, binder)  # one parameter per term, shared by every field it is tried on
        clauses.append(sa.or_(*(_contains(expression, pattern, binder) for expression in expressions)))
    return clauses


def _contains(
    text: sa.ColumnElement[Any], pattern: sa.BindParameter[str], binder: Binder
) -> sa.ColumnElement[Any]:
    """Case-insensitive "contains": both sides folded by the database, so they fold alike."""
    folded_pattern = casefold(binder.name, pattern)
    folded = casefold(binder.name, text).like(folded_pattern, escape=LIKE_ESCAPE)
    if not binder.facts.folds_text_in_python:
        return folded
    # SQLite's own LIKE folds ASCII letters only, and the Unicode folding is a Python function called
    # per row. The same answer, cheaper: SQLite's LIKE against the folded pattern decides every row
    # of plain ASCII text, and only a row holding another character is folded by the function.
    return sa.or_(text.like(folded_pattern, escape=LIKE_ESCAPE), sa.and_(_not_ascii(text), folded))


def _not_ascii(text: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """More bytes than characters: some character outside ASCII (a linear test, unlike a GLOB class)."""
    return sa.func.length(sa.cast(text, sa.LargeBinary())) != sa.func.length(text)


def _literal_text(text: str, binder: Binder) -> sa.BindParameter[str]:
    """`%text%` where `%`, `_` and the escape character itself match only literally."""
    return binder.bind(text, sa.String(), contains_pattern)


def contains_pattern(text: str) -> str:
    escaped = (
        text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2)
        .replace("%", f"{LIKE_ESCAPE}%")
        .replace("_", f"{LIKE_ESCAPE}_")
    )
    return f"%{escaped}%"


def _compares_as_text(field: FieldSpec) -> bool:
    """Time and other types: their values stay the client's text. (Text, enums and UUIDs take the values
    the planner converted and checked.)"""
    return field.kind in (FieldKind.TIME, FieldKind.OTHER)


def _flipped(orderings: Sequence[sa.UnaryExpression[Any]], plan: ListPlan) -> list[sa.UnaryExpression[Any]]:
    """A backwards cursor page reads the order reversed from its position (the executor turns the
    page round again); reversing ASC/DESC also moves the NULLs to the other end, as it must."""
    if plan.cursor is None or not plan.cursor.backwards:
        return list(orderings)
    element: Any
    flipped = []
    for ordering in orderings:
        element = ordering.element
        flipped.append(element.asc() if ordering.modifier is sql_operators.desc_op else element.desc())
    return flipped


def _ordering(order: Ordering) -> sa.UnaryExpression[Any]:
    return order.field.column.desc() if order.descending else order.field.column.asc()
