"""A page of the changes feed: the log's entries for one object's table, seen through its rules now.

Shared by `GET /changes/{name}` and the stream, so both answer the same entries for the same cursor.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from databases import Database

from pb_headless.changes.cursor import encode_cursor
from pb_headless.changes.log import Change, ChangeLog
from pb_headless.database import oneoff
from pb_headless.errors import CursorExpired
from pb_headless.query.compiler import compile_selected
from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.executor import fetch_by_key
from pb_headless.query.planner import ListPlan, ShowPlan
from pb_headless.query.render import render_value
from pb_headless.registry import ObjectSpec


@dataclass(frozen=True, slots=True)
class FeedPage:
    entries: list[dict[str, Any]]
    next: int  # the position to resume from
    has_more: bool
    positions: list[int] = field(default_factory=list)  # each entry's position in the log


@dataclass(frozen=True, slots=True)
class Reader:
    """What a page is read with: the change log, the database, the object as compiled now, `fields`
    and `with`, and the filters and search of a filtered feed (`selection`, None for none)."""

    log: ChangeLog
    database: Database
    dialect: str
    spec: ObjectSpec
    plan: ShowPlan
    selection: ListPlan | None = None

    @property
    def digest(self) -> str:
        """What the reader's cursors carry: the digest of its filter set, "" for none."""
        return "" if self.selection is None else self.selection.made_for


Render = Callable[[Reader, Change], Awaitable[dict[str, Any]]]


async def read_page(reader: Reader, since: int, limit: int) -> FeedPage:
    """The entries after `since`, one per row (its latest change), at most `limit`; 410 when the log
    was pruned past `since`."""
    edges = await reader.log.bounds()
    if since < edges.pruned:
        raise CursorExpired()
    spec = reader.spec
    found = await reader.log.latest_per_row(spec.table.name, since, edges.head, limit + 1, spec.name)
    has_more = len(found) > limit
    found = found[:limit]
    rendered = await render_page(reader, since, found, render_entry, pause=True)
    # Without more to read, everything up to the head was seen, whichever table it belonged to.
    following = found[-1].position if has_more else max(since, edges.head)
    return FeedPage([entry for _, entry in rendered], following, has_more, [at for at, _ in rendered])


async def render_page(
    reader: Reader, since: int, found: Sequence[Change], render: Render, pause: bool = False
) -> list[tuple[int, dict[str, Any]]]:
    """The page's entries, each with its position. A filtered reader asks once for the whole page
    which of its rows the filters select now (a query bounded by the page's keys): those are
    rendered by `render`; every other one is a `delete` with `record: null` — it left the
    selection, or may have (the client drops what it does not hold) — except a row the client
    cannot hold: one created since the cursor, or one whose every change since the cursor left the
    filters' columns alone (`outside_since`). Cursors carry the filter set's digest."""
    chosen = await selected_keys(reader, found)
    outside = (
        set()
        if chosen is None
        else await outside_since(reader, since, [c for c in found if c.key not in chosen])
    )
    entries = []
    for change in found:
        if chosen is not None and change.key not in chosen:
            if change.is_new or change.key in outside:
                continue
            entry = left_entry(reader, change)
        else:
            entry = await render(reader, change)
            if reader.digest:
                entry = {**entry, "cursor": encode_cursor(change.position, reader.digest)}
        entries.append((change.position, entry))
        if pause:
            # A reader on the loop's thread (SQLite) may not suspend at all: a page of a backlog gives
            # way to other requests between its entries rather than holding the loop for the whole page.
            await asyncio.sleep(0)
    return entries


async def selected_keys(reader: Reader, found: Sequence[Change]) -> set[str] | None:
    """The keys (as the log writes them) among `found` the reader's filters select now; None when
    the reader has no filter."""
    if reader.selection is None:
        return None
    return await selected(
        reader.database, reader.dialect, reader.spec, reader.selection, [c.key for c in found]
    )


async def selected(
    database: Database, dialect: str, spec: ObjectSpec, plan: ListPlan, texts: Sequence[str]
) -> set[str]:
    """Which of the keys `texts` (as the change log writes them) the plan's filters and search select
    now, read as a list reads them: one statement bounded by the keys (query/compiler.py
    `compile_selected`). Also what a filtered webhook endpoint is fanned out by."""
    keys = {}
    for text in texts:
        try:
            keys[text] = convert(spec.pk, text)
        except ConversionError:
            continue
    if not keys:
        return set()
    statement = compile_selected(spec, plan, list(dict.fromkeys(keys.values())), dialect)
    narrowed = spec.query is not None or bool(plan.narrowings)
    fetch = functools.partial(oneoff.fetch_rows, database) if narrowed else database.fetch_all
    chosen = {render_value(spec.pk, row[0]) for row in await fetch(statement)}
    return {text for text, key in keys.items() if render_value(spec.pk, key) in chosen}


def row_columns(spec: ObjectSpec, plan: ListPlan) -> frozenset[str] | None:
    """The columns of the object's own table whose values alone decide whether a row matches the
    plan's filters and search; None when a filter reaches another table (a relation path), whose
    rows can change without this one changing."""
    if any(condition.relation is not None for condition in plan.conditions):
        return None
    names = {str(condition.field.column.name) for condition in plan.conditions}
    if plan.search:
        names.update(str(spec.fields[name].column.name) for name in spec.searchable if name in spec.fields)
    return frozenset(names)


async def outside_since(reader: Reader, since: int, unselected: Sequence[Change]) -> set[str]:
    """The keys among `unselected` (rows the filters do not select now) that provably were not
    selected at `since` either: every change to the row since then was an update, of a row the object
    served before and after it, that changed none of the columns the filters read. A row with one
    change is judged by it; the others with one statement bounded by their keys."""
    columns = None if reader.selection is None else row_columns(reader.spec, reader.selection)
    if columns is None or not unselected:
        return set()
    name = reader.spec.name
    outside = {c.key for c in unselected if c.entries == 1 and c.kept_out_of(name, columns)}
    several = [c for c in unselected if c.entries > 1 and c.kept_out_of(name, columns)]
    if several:
        upto = max(c.position for c in several)
        keys = [c.key for c in several]
        outside.update(
            await reader.log.unmoved_rows(reader.spec.table.name, name, since, upto, keys, columns)
        )
    return outside


def _key_text(reader: Reader, change: Change) -> Any:
    try:
        return render_value(reader.spec.pk, convert(reader.spec.pk, change.key))
    except ConversionError:
        return None


def left_entry(reader: Reader, change: Change) -> dict[str, Any]:
    """A change whose row the reader's filters do not select now: a `delete`."""
    key = _key_text(reader, change)
    return {
        "op": "delete",
        "id": change.key if key is None else key,
        "record": None,
        "cursor": encode_cursor(change.position, reader.digest),
        "at": change.at.astimezone(UTC).isoformat(),
    }


async def render_entry(reader: Reader, change: Change) -> dict[str, Any]:
    """One entry as the feed and the stream send it: the row as the reader's rules show it now."""
    spec = reader.spec
    try:
        key = convert(spec.pk, change.key)
    except ConversionError:  # a key the object's kind cannot read: nothing to show of it
        key = None
    record = None
    if key is not None and change.op != "delete":
        record, _ = await fetch_by_key(reader.database, spec, reader.plan, key, reader.dialect)
    return {
        "op": "upsert" if record is not None else "delete",
        "id": change.key if key is None else render_value(spec.pk, key),
        "record": record,
        "cursor": encode_cursor(change.position),
        "at": change.at.astimezone(UTC).isoformat(),
    }
