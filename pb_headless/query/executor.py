"""Runs compiled plans on the host's `databases.Database`: a page, its total, and its relations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from databases import Database

from pb_headless.errors import ValidationFailed
from pb_headless.query.compiler import RELATION_KEY, compile_list, compile_show, relation_select
from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.query.render import Row, render_record
from pb_headless.registry.spec import ObjectSpec, RelationSpec


async def fetch_list(database: Database, spec: ObjectSpec, plan: ListPlan,
                     dialect: str) -> tuple[list[dict[str, Any]], int]:
    """The page of records and the total number of matching records."""
    if plan.details:
        raise ValidationFailed(plan.details)
    page, count = compile_list(spec, plan, dialect)
    rows = await database.fetch_all(page) if plan.limit > 0 else []
    if rows and len(rows) < plan.limit:
        total = plan.offset + len(rows)  # a short, non-empty page is the last one: no count needed
    elif not rows and plan.offset == 0 and plan.limit > 0:
        total = 0
    else:
        total = int(await database.fetch_val(count) or 0)
    records = [render_record(row, plan.fields) for row in rows]
    await _attach_relations(database, plan.relations, rows, records)
    return records, total


async def fetch_one(database: Database, spec: ObjectSpec, plan: ShowPlan, pk_raw: str,
                    dialect: str) -> dict[str, Any] | None:
    """The published record with this id, or None (a 404) when there is none or the id cannot be one."""
    try:
        pk_value = convert(spec.pk, pk_raw)
    except ConversionError:
        return None
    row = await database.fetch_one(compile_show(spec, plan, pk_value, dialect))
    if row is None:
        return None
    record = render_record(row, plan.fields)
    await _attach_relations(database, plan.relations, [row], [record])
    return record


async def _attach_relations(database: Database, relations: Sequence[RelationSpec], rows: Sequence[Row],
                            records: list[dict[str, Any]]) -> None:
    """One query per relation for the whole page (never one per row)."""
    for relation in relations:
        local_name = relation.local.name
        keys = list(dict.fromkeys(row[local_name] for row in rows if row[local_name] is not None))
        related = await _related(database, relation, keys)
        for row, record in zip(rows, records, strict=True):
            found = related.get(row[local_name], [])
            record[relation.name] = found if relation.many else (found[0] if found else None)


async def _related(database: Database, relation: RelationSpec,
                   keys: list[Any]) -> dict[Any, list[dict[str, Any]]]:
    if not keys:
        return {}
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for row in await database.fetch_all(relation_select(relation, keys)):
        grouped.setdefault(row[RELATION_KEY], []).append(render_record(row, relation.fields))
    return grouped
