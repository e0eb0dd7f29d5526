"""Which objects serve a row, as the change-log triggers tell it for the row before and after a change.

An object serves a row when the row passes its publication rule (`published` true, where the table
has that column) and its `query` narrowing. The triggers evaluate exactly the expressions the lists
compile, with the table's columns read from the trigger's OLD and NEW row, and write the names of
the objects that served the row into the entry (`seen_before`, `seen_after`, each `|name|` per
object). The feed then leaves out, per object, a change to a row that object served neither before
nor after it (docs/changes.md, "Which changes an object shows").

A `query` the trigger cannot evaluate row by row (a join, `distinct`, a value Python computes anew on
each call such as the time of day) is left out of the trigger: such an object is judged by its
publication rule alone, and the docs say what its feed may then show.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import visitors

from pb_headless.database.change_triggers import ChangeTriggers, Recorded
from pb_headless.registry import ObjectSpec

log = logging.getLogger("pb_headless")

SEPARATOR = "|"


@dataclass(frozen=True, slots=True)
class View:
    """One object's view of a table: the rows it serves (None: every row)."""

    name: str
    rows: sa.ColumnElement[Any] | None


@dataclass(frozen=True, slots=True)
class WatchedTable:
    """A published table as its triggers see it: its key column and the objects that publish it.
    Without views (a bare table name given to `TriggerSync.follow`), the triggers record no visibility."""

    key: str
    views: tuple[View, ...] = ()
    table: sa.Table | None = None
    # The columns whose staying as they were an update records: those the objects' filters and
    # search read (changes/feed.py `row_columns`), in name order.
    tracked: tuple[str, ...] = ()


def watched_tables(catalog: Mapping[str, ObjectSpec]) -> dict[str, WatchedTable]:
    """Published table → its key, the views of the objects publishing it (in name order) and the
    columns their filters and search read."""
    views: dict[str, list[View]] = {}
    tracked: dict[str, set[str]] = {}
    for name in sorted(catalog):
        spec = catalog[name]
        views.setdefault(spec.table.name, []).append(View(name, served_rows(spec)))
        read = {*spec.filterable, *spec.searchable}
        tracked.setdefault(spec.table.name, set()).update(
            str(field.column.name) for field_name, field in spec.fields.items() if field_name in read
        )
    return {
        spec.table.name: WatchedTable(
            str(spec.pk.column.name),
            tuple(views[spec.table.name]),
            spec.table,
            tuple(sorted(tracked[spec.table.name])),
        )
        for spec in catalog.values()
    }


def served_rows(spec: ObjectSpec) -> sa.ColumnElement[Any] | None:
    """The condition a row of the object's table passes when the object serves it; None for every row."""
    conditions: list[sa.ColumnElement[Any]] = []
    if spec.published is not None:
        conditions.append(spec.published == sa.true())
    narrowing = _row_narrowing(spec)
    if narrowing is not None:
        conditions.append(narrowing)
    return sa.and_(*conditions) if conditions else None


def _row_narrowing(spec: ObjectSpec) -> sa.ColumnElement[Any] | None:
    """The `query`'s condition when it is a plain `where` over the object's table that gives the same
    SQL at each call; otherwise None (the trigger then judges by the publication rule alone)."""
    if spec.query is None:
        return None
    base = sa.select(*spec.table.primary_key.columns).select_from(spec.table)
    try:
        first, second = spec.query(base), spec.query(base)
        condition = first.whereclause
        if condition is None:
            return None
        rebuilt = base.where(condition)
        dialect = sqlite.dialect()
        same = {_literal_sql(first, dialect), _literal_sql(second, dialect), _literal_sql(rebuilt, dialect)}
    except Exception:  # a value without a literal form, or a narrowing that is not a Select
        same = set()
    if len(same) != 1:
        log.info(
            "pb_headless: the change log judges object '%s' by its publication rule alone: its query "
            "cannot be evaluated on one row in a trigger (docs/changes.md)",
            spec.name,
        )
        return None
    return condition


def _literal_sql(element: sa.ClauseElement, dialect: Dialect) -> str:
    return str(element.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))


def seen_sql(triggers: ChangeTriggers, watched: WatchedTable, row: str) -> str | None:
    """SQL giving the `|name|` of each object that serves `row` (`OLD`, `NEW`, or `($1)` in PostgreSQL's
    dynamic statement); None when the table has no views (nothing recorded). A view whose condition
    cannot be written as a literal is judged by the publication rule (or taken as serving every row)."""
    if not watched.views:
        return None
    parts = []
    for view in watched.views:
        marker = _string_literal(f"{SEPARATOR}{view.name}{SEPARATOR}")
        condition = _row_condition(triggers.sql_dialect, watched, view, row)
        parts.append(marker if condition is None else f"CASE WHEN {condition} THEN {marker} ELSE '' END")
    return parts[0] if len(parts) == 1 else triggers.joined(parts)


def _row_condition(dialect: Dialect, watched: WatchedTable, view: View, row: str) -> str | None:
    if view.rows is None or watched.table is None:
        return None
    table = watched.table
    quote = dialect.identifier_preparer.quote

    def from_row(element: Any, **kw: Any) -> Any:
        if isinstance(element, sa.Column) and element.table is table:
            return sa.literal_column(f"{row}.{quote(element.name)}", type_=element.type)
        return None

    options: dict[str, Any] = {}
    condition = visitors.replacement_traverse(view.rows, options, from_row)
    try:
        return f"({_literal_sql(condition, dialect)})"
    except Exception:
        log.info("pb_headless: the change log cannot evaluate object '%s' in a trigger", view.name)
        return None


def _string_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def recorded_sql(triggers: ChangeTriggers, watched: WatchedTable) -> tuple[Recorded, str]:
    """What the table's triggers record, as the database's SQL, and the digest of the rules that their
    names carry (so that a rule that changed makes new triggers)."""
    old, new = seen_sql(triggers, watched, "OLD"), seen_sql(triggers, watched, "NEW")
    rules = f"{old or ''}\0{new or ''}"
    digest = hashlib.sha1(rules.encode()).hexdigest()[:8] if rules.strip("\0") else ""
    argument = seen_sql(triggers, watched, "($1)")
    return Recorded(watched.key, watched.tracked, old, new, argument), digest


def is_seen_by(seen: str | None, name: str) -> bool:
    """Whether an entry's `seen_before` or `seen_after` names the object; NULL (not known) is seen."""
    return seen is None or f"{SEPARATOR}{name}{SEPARATOR}" in seen


def left_alone(
    op: str, unchanged: str | None, before: str | None, after: str | None, name: str, columns: frozenset[str]
) -> bool:
    """Whether a change provably left alone whether the row matches filters that read `columns` of
    the row itself: an update of a row the object served before and after, whose unchanged columns
    (`,name,` each) hold every one of `columns`."""
    return (
        op == "update"
        and unchanged is not None
        and before is not None
        and after is not None
        and is_seen_by(before, name)
        and is_seen_by(after, name)
        and all(f",{column}," in unchanged for column in columns)
    )
