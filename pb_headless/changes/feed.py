"""A page of the changes feed: the log's entries for one object's table, seen through its rules now.

Shared by `GET /changes/{name}` and the stream, so both answer the same entries for the same cursor.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from databases import Database

from pb_headless.changes.cursor import encode_cursor
from pb_headless.changes.log import Change, bounds, latest_per_row
from pb_headless.errors import CursorExpired
from pb_headless.query.conversion import ConversionError, convert
from pb_headless.query.executor import fetch_by_key
from pb_headless.query.planner import ShowPlan
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
    """What a page is read with: the database, the object as compiled now, `fields` and `with`."""

    database: Database
    dialect: str
    spec: ObjectSpec
    plan: ShowPlan


async def read_page(reader: Reader, since: int, limit: int) -> FeedPage:
    """The entries after `since`, one per row (its latest change), at most `limit`; 410 when the log
    was pruned past `since`."""
    edges = await bounds(reader.database)
    if since < edges.pruned:
        raise CursorExpired()
    spec = reader.spec
    found = await latest_per_row(reader.database, spec.table.name, since, edges.head, limit + 1, spec.name)
    has_more = len(found) > limit
    found = found[:limit]
    entries = []
    for change in found:
        entries.append(await render_entry(reader, change))
        # A reader on the loop's thread (SQLite) may not suspend at all: a page of a backlog gives
        # way to other requests between its entries rather than holding the loop for the whole page.
        await asyncio.sleep(0)
    # Without more to read, everything up to the head was seen, whichever table it belonged to.
    following = found[-1].position if has_more else max(since, edges.head)
    return FeedPage(entries, following, has_more, [change.position for change in found])


async def head_position(database: Database) -> int:
    return (await bounds(database)).head


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
