"""Applies an object's whitelists to a parsed query: the plan of what to read, and what was dropped.

Pure like the grammar: no I/O and no SQL statements, only `FieldSpec`/`RelationSpec` references and
converted Python values. A plan whose `details` is not empty must not run; the caller answers 422
(`ValidationFailed(plan.details)`). Values that do not convert and queries past the bounds of
`pb_headless.query.limits` end up there, before any SQL is built.

`filter_operators` and `sortable_fields` say what the planner lets a client use, so that the OpenAPI
document states it without restating the rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pb_headless.query.conversion import ConversionError, as_flag, convert, literal_text
from pb_headless.query.cursors import Cursor, fingerprint
from pb_headless.query.grammar import FilterTerm, ListItem, ParsedQuery, SearchText
from pb_headless.query.limits import (
    MAX_BOUND_VALUES,
    MAX_FILTER_CONDITIONS,
    MAX_LIST_VALUES,
    MAX_TEXT_LENGTH,
    most_search_terms,
)
from pb_headless.query.operators import Operator
from pb_headless.query.paging import (
    COUNT_MODES,
    has_cursor,
    plan_count,
    plan_cursor,
    plan_paging,
)
from pb_headless.query.render import Render, renderer
from pb_headless.registry.spec import FieldSpec, ObjectSpec, RelationSpec

PLAN_BYTES = 2000  # a kept plan, its derived shapes and its query string (tracemalloc, PostgreSQL)
PLAN_VALUE_BYTES = 80  # one value a filter binds: the value and the condition's share of it

__all__ = [
    "COUNT_MODES",
    "MAX_LIST_VALUES",
    "Condition",
    "ListPlan",
    "Ordering",
    "ShowPlan",
    "filter_operators",
    "most_conditions",
    "plan_list",
    "plan_selection",
    "plan_show",
    "sortable_fields",
]


@dataclass(frozen=True, slots=True)
class Condition:
    """One filter: `value` is a scalar, a tuple for `in`/`nin`/`between`, a bool for `null`."""

    field: FieldSpec
    operator: Operator
    value: Any
    written: str
    relation: RelationSpec | None = None  # a path's relation (`author.name`): `field` is a related one

    @property
    def name(self) -> str:
        """The field or path as `filterable` names it (`title`, `author.name`)."""
        return self.field.name if self.relation is None else f"{self.relation.name}.{self.field.name}"

    @property
    def bound_values(self) -> int:
        """How many values this condition binds into the statement."""
        if self.operator.takes_flag:
            return 0
        return len(self.value) if self.operator.takes_list else 1


@dataclass(frozen=True, slots=True)
class Ordering:
    field: FieldSpec
    descending: bool = False


@dataclass(frozen=True)
class ShowPlan:
    fields: tuple[FieldSpec, ...]  # published order, primary key included
    relations: tuple[RelationSpec, ...] = ()
    ignored: tuple[str, ...] = ()

    @cached_property
    def render(self) -> Render:
        """How its rows become records (query/render.py), worked out once per plan. Not a field:
        `dataclasses.replace` gives the new plan its own."""
        return renderer(self.fields)

    @property
    def weight(self) -> int:
        """The bytes a kept plan holds, roughly (`caches.plans` bounds their sum): itself, what is
        derived from it and its query string, and each value its filters bind."""
        return PLAN_BYTES


@dataclass(frozen=True)
class ListPlan(ShowPlan):
    conditions: tuple[Condition, ...] = ()
    search: tuple[str, ...] = ()  # every term must appear in some searchable field
    order: tuple[Ordering, ...] = ()  # ends with the primary key, ascending
    limit: int = 0
    offset: int = 0
    details: dict[str, list[str]] = field(default_factory=dict)  # non-empty: answer 422
    cursor: Cursor | None = None  # `after`/`before`: a keyset page; `offset` is then 0
    made_for: str = ""  # the fingerprint this list's cursors carry (query/cursors.py)
    count: str = "exact"  # one of COUNT_MODES

    @property
    def narrowings(self) -> tuple[Callable[[Any], Any], ...]:
        """The related objects' `query` narrowings its path filters call (compiler `_related_rows`):
        like the object's own, they may read the clock, so the statement is compiled every time."""
        return tuple(c.relation.query for c in self.conditions if c.relation is not None and c.relation.query)

    @property
    def weight(self) -> int:
        values = sum(condition.bound_values for condition in self.conditions)
        return PLAN_BYTES + PLAN_VALUE_BYTES * values + sum(len(term) for term in self.search)

    @property
    def reads_past(self) -> bool:
        """Whether the page is read with one row more, which says whether more follow: a cursor page
        and a page without an exact count cannot tell it from the total, nor a search, whose total
        may be an estimate (query/executor.py)."""
        return self.cursor is not None or self.count != "exact" or bool(self.search)


def plan_show(spec: ObjectSpec, query: ParsedQuery) -> ShowPlan:
    """`fields` and `with` apply to show as to list; the list-only parameters are not consulted."""
    notes = _Dropped(query)
    return ShowPlan(
        fields=_fields(spec, query.fields, notes),
        relations=_relations(spec, query.relations, notes),
        ignored=notes.ignored(),
    )


def plan_list(spec: ObjectSpec, query: ParsedQuery) -> ListPlan:
    notes = _Dropped(query)
    fields, relations, conditions, search = _shape_and_selection(spec, query, notes)
    order = _order(spec, query.sort, notes)
    made_for = _made_for(spec, order, conditions, search)
    cursor = plan_cursor(query, [ordering.field for ordering in order], made_for, notes)
    limit, offset = plan_paging(spec, query, notes, keyset=cursor is not None or has_cursor(query))
    count = plan_count(query, notes)
    return ListPlan(
        fields=fields,
        relations=relations,
        conditions=conditions,
        search=search,
        order=order,
        limit=limit,
        offset=offset,
        ignored=notes.ignored(),
        details=notes.details,
        cursor=cursor,
        made_for=made_for,
        count=count,
    )


def plan_selection(spec: ObjectSpec, query: ParsedQuery) -> ListPlan:
    """A change feed's plan (docs/changes.md, "Filtered changes"): `fields` and `with` as on show, and
    the filters and search as on a list, checked and ignored exactly as a list checks and ignores
    them. `made_for` is the digest of the filter set, "" without one: a feed cursor carries it."""
    notes = _Dropped(query)
    fields, relations, conditions, search = _shape_and_selection(spec, query, notes)
    return ListPlan(
        fields=fields,
        relations=relations,
        conditions=conditions,
        search=search,
        ignored=notes.ignored(),
        details=notes.details,
        made_for=selection_digest(conditions, search),
    )


def _shape_and_selection(
    spec: ObjectSpec, query: ParsedQuery, notes: _Dropped
) -> tuple[tuple[FieldSpec, ...], tuple[RelationSpec, ...], tuple[Condition, ...], tuple[str, ...]]:
    """What a list and a change feed read alike: `fields`, `with`, the filters and search."""
    fields = _fields(spec, query.fields, notes)
    relations = _relations(spec, query.relations, notes)
    conditions = _conditions(spec, query.filters, notes)
    search = _search(spec, query, notes)
    if sum(condition.bound_values for condition in conditions) + len(search) > MAX_BOUND_VALUES:
        notes.fail("filter", f"must have at most {MAX_BOUND_VALUES} values in all")
    return fields, relations, conditions, search


def selection_digest(conditions: tuple[Condition, ...], search: tuple[str, ...]) -> str:
    """8 hex digits naming a filter set however it was written (`filter[a]=1` and `filter[a][eq]=1`
    alike, in any order); "" for none."""
    if not conditions and not search:
        return ""
    filters = sorted((c.name, str(c.operator), repr(c.value)) for c in conditions)
    described = repr((tuple(filters), tuple(sorted(search)))).encode()
    return hashlib.sha256(described).hexdigest()[:8]


class _Dropped:
    """What the planner dropped (in query-string order) and which values failed to convert."""

    def __init__(self, query: ParsedQuery) -> None:
        self._ignored = [(item.position, item.written) for item in query.ignored]
        self.details: dict[str, list[str]] = {}

    def ignore(self, position: int, written: str) -> None:
        self._ignored.append((position, written))

    def fail(self, written: str, message: str) -> None:
        messages = self.details.setdefault(written, [])
        if message not in messages:
            messages.append(message)

    def ignored(self) -> tuple[str, ...]:
        ordered = sorted(self._ignored, key=lambda item: item[0])  # stable: items of one parameter keep order
        return tuple(dict.fromkeys(written for _, written in ordered))


def _fields(spec: ObjectSpec, items: tuple[ListItem, ...], notes: _Dropped) -> tuple[FieldSpec, ...]:
    wanted: set[str] = set()
    for item in items:
        if item.name in spec.fields:
            wanted.add(item.name)
        else:
            notes.ignore(item.position, item.written)
    if not wanted:
        return tuple(spec.fields.values())
    wanted.add(spec.pk.name)
    return tuple(field for name, field in spec.fields.items() if name in wanted)


def _relations(spec: ObjectSpec, items: tuple[ListItem, ...], notes: _Dropped) -> tuple[RelationSpec, ...]:
    chosen: dict[str, RelationSpec] = {}
    for item in items:
        relation = spec.relations.get(item.name)
        if relation is None:  # unknown, not declared, or nested (`author.posts`): one level only
            notes.ignore(item.position, item.written)
        else:
            chosen.setdefault(item.name, relation)
    return tuple(chosen.values())


def filter_operators(spec: ObjectSpec) -> dict[str, tuple[Operator, ...]]:
    """Each field a list can filter on, in published order, then each usable path (`author.name`),
    with the operators that apply to it.

    A filterable field no operator applies to (JSON) is left out: every filter on it is ignored.
    """
    fields = {name: field for name, field in spec.fields.items() if name in spec.filterable}
    fields.update((name, path.field) for name, path in spec.paths.items())
    operators = {
        name: tuple(operator for operator in Operator if operator.applies_to(field.kind))
        for name, field in fields.items()
    }
    return {name: applicable for name, applicable in operators.items() if applicable}


def sortable_fields(spec: ObjectSpec) -> tuple[str, ...]:
    """The fields `sort` takes, in published order (JSON has no ordering on PostgreSQL)."""
    return tuple(
        name for name, field in spec.fields.items() if name in spec.sortable and field.kind.is_comparable
    )


def most_conditions(spec: ObjectSpec) -> int:
    """The most filter conditions one list request may have: `MAX_FILTER_CONDITIONS`, or, for an object
    offering more filter parameters than that, one per parameter (`filter[f]` and each `filter[f][op]`),
    so that a request using every documented parameter once is always answered."""
    most = spec.derived.get("planner.most_conditions")
    if most is None:  # kept on the spec: it goes away with the spec at the next registry version
        offered = sum(1 + len(operators) for operators in filter_operators(spec).values())
        most = spec.derived["planner.most_conditions"] = max(MAX_FILTER_CONDITIONS, offered)
    return int(most)


def _conditions(spec: ObjectSpec, terms: tuple[FilterTerm, ...], notes: _Dropped) -> tuple[Condition, ...]:
    applicable = [term for term in terms if _applies(spec, term, notes)]
    most = most_conditions(spec)
    if len(applicable) > most:
        # Refused before any value is converted: the count alone is the client's mistake.
        notes.fail("filter", f"must have at most {most} conditions")
        return ()
    return tuple(condition for term in applicable if (condition := _condition(spec, term, notes)) is not None)


def _applies(spec: ObjectSpec, term: FilterTerm, notes: _Dropped) -> bool:
    """Whether the object lets this filter act; one it does not is ignored and named. A path that is
    not usable is ignored before its value is looked at, so that nothing of the related rows shows."""
    found = _target(spec, term.field)
    if found is None or not term.operator.applies_to(found[0].kind):
        notes.ignore(term.position, term.written)
        return False
    return True


def _target(spec: ObjectSpec, name: str) -> tuple[FieldSpec, RelationSpec | None] | None:
    """The field a filter key names, and the relation it is read through for a path (`author.name`)."""
    path = spec.paths.get(name)
    if path is not None:
        return path.field, path.relation
    field = spec.fields.get(name)
    return (field, None) if field is not None and name in spec.filterable else None


def _condition(spec: ObjectSpec, term: FilterTerm, notes: _Dropped) -> Condition | None:
    found = _target(spec, term.field)
    assert found is not None  # `_applies` said so
    field, relation = found
    try:
        value = _operand(field, term)
    except ConversionError as error:
        notes.fail(term.written, str(error))
        return None
    return Condition(field, term.operator, value, term.written, relation)


def _operand(field: FieldSpec, term: FilterTerm) -> Any:
    values, operator = term.values, term.operator
    if operator.takes_flag:
        flag = as_flag(values[0]) if len(values) == 1 else None
        if flag is None:
            raise ConversionError("must be true, 1, false or 0")
        return flag
    if operator in (Operator.IN, Operator.NIN) and len(values) > MAX_LIST_VALUES:
        raise ConversionError(f"must have at most {MAX_LIST_VALUES} values")
    if operator is Operator.BETWEEN and len(values) != 2:
        raise ConversionError("must have exactly two values")
    if operator.takes_list:
        return tuple(convert(field, value) for value in values)
    if operator is Operator.LIKE:  # a word to look for, not a value of the column's type
        return _bounded_text(values[0])
    return convert(field, values[0])


def _bounded_text(text: str) -> str:
    """A `like` or `search` value: a longer one costs the database more than any real client needs."""
    if len(text) > MAX_TEXT_LENGTH:
        raise ConversionError(f"must be at most {MAX_TEXT_LENGTH} characters")
    return literal_text(text)


def _search(spec: ObjectSpec, query: ParsedQuery, notes: _Dropped) -> tuple[str, ...]:
    if not query.search:
        return ()
    if not spec.searchable:
        for text in query.search:
            notes.ignore(text.position, text.written)
        return ()
    terms: dict[str, None] = {}
    for text in query.search:
        try:
            _bounded_text(_search_value(text))
        except ConversionError as error:
            notes.fail("search", str(error))
            continue
        terms.update(dict.fromkeys(text.terms))
    most = most_search_terms(len(spec.searchable))
    if len(terms) > most:
        # Every word is one more LIKE on every searchable field, for every row.
        notes.fail("search", f"must have at most {most} different words")
        return ()
    return tuple(terms)


def _search_value(text: SearchText) -> str:
    return text.written.removeprefix("search=")


def _order(spec: ObjectSpec, items: tuple[ListItem, ...], notes: _Dropped) -> tuple[Ordering, ...]:
    order: dict[str, Ordering] = {}
    for item in items:
        field = spec.fields.get(item.name)
        if (
            field is None
            or item.name not in spec.sortable
            or not field.kind.is_comparable
            or item.name in order
        ):
            # JSON has no ordering on PostgreSQL; a repeated field cannot sort twice.
            notes.ignore(item.position, item.written)
        else:
            order[item.name] = Ordering(field, item.descending)
    if not order:
        for name, descending in spec.default_sort:
            column = spec.columns.get(name)
            if column is not None and column.kind.is_comparable and name not in order:
                order[name] = Ordering(column, descending)
    # The tie-breaker makes paging stable; docs/query.md makes it ascending whatever came before.
    order.setdefault(spec.pk.name, Ordering(spec.pk))
    return tuple(order.values())


def _made_for(
    spec: ObjectSpec, order: tuple[Ordering, ...], conditions: tuple[Condition, ...], search: tuple[str, ...]
) -> str:
    """What this list's cursors are made for: object, sort, filters with their values, search."""
    sort = [(ordering.field.name, ordering.descending) for ordering in order]
    filters = sorted((c.written, str(c.operator), repr(c.value)) for c in conditions)
    return fingerprint(spec.name, sort, filters, search)
