"""A list's `ETag` taken from the change log, so a revalidation is answered 304 before the page is read
(docs/caching.md, "What a 304 costs").

A list answer is a function of the object's declaration, the request (address, query as written) and
the rows of the tables it reads. Where every one of those tables has the change log's triggers, the
positions the log gives them (changes/positions.py) say whether their rows changed, whoever changed
them; the tag is a digest of the positions, the request, the token, the catalog version, a digest of
the declaration and the library's version. Nothing of it is per process: every instance derives the
same tag for the same request and data.

Where the answer may depend on something the log does not see, the tag stays the digest of the body
(`None` here): an object with a `query` narrowing or a shown relation with one (either may read the
clock or other tables), a table without triggers (the host opted out, or the database refused them),
and `count=estimated` (the database's estimate moves with its statistics, not with rows).

The positions are read before the page, so a tag never stands for a body older than itself: a write
that commits between the two reads is in the page, and moves the position past the tag.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from typing import Any, NamedTuple

import sqlalchemy as sa
from starlette.requests import Request

from pb_headless.api.context import RequestContext
from pb_headless.changes.positions import MOST_TABLES, table_positions
from pb_headless.database.caches import KEPT_PLAN_QUERY
from pb_headless.query.planner import ListPlan
from pb_headless.registry import ObjectSpec
from pb_headless.registry.spec import FieldSpec, RelationSpec
from pb_headless.release import VERSION
from pb_headless.state.snapshot import Snapshot

_KIND = "pb-list-1"  # changes when what goes into the tag changes
KEPT_DESCRIBED = 1024  # requests and tokens whose tag digest is begun once per snapshot


def derived_tables(context: RequestContext, spec: ObjectSpec, plan: ListPlan) -> list[str] | None:
    """The tables the answer reads, when the change log covers every one of them; else None."""
    hub = context.changes
    if hub is None or not hub.enabled or plan.count == "estimated" or spec.query is not None:
        return None
    tables = [spec.table.name]
    # The relations shown and those a path filter reads (`filter[author.name]`): both change the answer.
    read = [*plan.relations, *(c.relation for c in plan.conditions if c.relation is not None)]
    for relation in read:
        if relation.query is not None:
            return None
        tables.append(relation.table.name)
        if relation.through is not None:
            tables.append(relation.through.table.name)
    tables = list(dict.fromkeys(tables))
    if len(tables) > MOST_TABLES or not set(tables) <= hub.covered:
        return None
    return tables


class ListTag(NamedTuple):
    """A list's tag, the positions it was derived from, and the request as asked: object, query
    string, token and address, all the tag digests but the data (None when the query string is too
    long to keep anything by it)."""

    tag: str
    positions: tuple[int, ...]
    asked: tuple[object, ...] | None


async def list_tag(
    context: RequestContext, request: Request, spec: ObjectSpec, plan: ListPlan
) -> ListTag | None:
    """The list's tag (one read of the positions), or None where it cannot be derived."""
    tables = derived_tables(context, spec, plan)
    if tables is None:
        return None
    positions = await table_positions(context.database, context.caches, tables)
    written: bytes = request.scope.get("query_string", b"")
    token = context.principal.token
    key = (context.backend.name, context.api_root, spec.name, written, token.id, token.scopes)
    kept: dict[tuple[object, ...], Any] = context.snapshot.derive("list_tags.described", _described)
    described = kept.get(key)
    if described is None:
        # What the tag describes, all but the positions: the same for every page of this request
        # and token until the snapshot changes. The digest below is that of `repr` of the whole tuple.
        described = hashlib.sha256(
            (
                "("
                + ", ".join(
                    repr(part)
                    for part in (
                        _KIND,
                        VERSION,
                        context.backend.name,
                        context.snapshot.version,
                        declaration_digest(context.snapshot, spec.name),
                        context.api_root,
                        spec.name,
                        written,
                        token.id,
                        sorted(token.scopes),
                    )
                )
                + ", "
            ).encode()
        )
        if len(written) <= KEPT_PLAN_QUERY:
            if len(kept) >= KEPT_DESCRIBED:
                kept.clear()
            kept[key] = described
    hashed = described.copy()
    hashed.update((repr(positions) + ")").encode())
    digest = hashed.digest()[:20]
    tag = '"' + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=") + '"'
    return ListTag(tag, positions, key if len(written) <= KEPT_PLAN_QUERY else None)


def _described(_: Snapshot) -> dict[tuple[object, ...], Any]:
    return {}


def declaration_digest(snapshot: Snapshot, name: str) -> str:
    """A digest of what of the object's declaration shapes a read, the same on every instance (a new
    deployment that changes a declaration without a catalog version changes it)."""
    digests: dict[str, str] = snapshot.derive("list_tags.declarations", _declaration_digests)
    return digests[name]


def _declaration_digests(snapshot: Snapshot) -> dict[str, str]:
    return {
        name: hashlib.sha256(repr(_declaration(spec)).encode()).hexdigest()
        for name, spec in snapshot.catalog.items()
    }


def _declaration(spec: ObjectSpec) -> tuple[object, ...]:
    return (
        spec.name,
        spec.table.name,
        _fields(spec.fields.values()),
        sorted(spec.filterable),
        spec.searchable,
        sorted(spec.sortable),
        tuple((name, _relation(relation)) for name, relation in spec.relations.items()),
        spec.per_page,
        spec.max_per_page,
        spec.default_sort,
        _column(spec.published),
        spec.search_index,
    )


def _relation(relation: RelationSpec) -> tuple[object, ...]:
    through = relation.through
    return (
        relation.many,
        relation.table.name,
        _column(relation.local),
        _column(relation.remote),
        _fields(relation.fields),
        _column(relation.published),
        relation.limit,
        tuple((_column(column), descending) for column, descending in relation.order),
        None if through is None else (through.table.name, _column(through.local), _column(through.remote)),
    )


def _fields(fields: Iterable[FieldSpec]) -> tuple[object, ...]:
    return tuple(
        (field.name, _column(field.column), repr(field.column.type), repr(field.description))
        for field in fields
    )


def _column(column: sa.ColumnElement[Any] | None) -> str | None:
    """`table.column` (a column of a join or alias names what it was taken from)."""
    if column is None:
        return None
    table = getattr(column, "table", None)
    return f"{getattr(table, 'name', '')}.{getattr(column, 'name', '')}"
