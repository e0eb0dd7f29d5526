"""Reading the change log: its head, how far it was pruned, and the entries after a position.

Why what these functions return is safe to hand out: a trigger takes its position by moving the
head row, which stays locked until its transaction ends (pb_headless/changes/triggers.py). A writer
that comes second waits, so position N+1 cannot commit before N; and the head read here is the
last committed one. Every entry at or below the head is therefore committed and visible, and no
entry below it can still appear: reading `(after, head]` in position order loses nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.changes.triggers import HEAD_ID, PRUNED_ID
from pb_headless.changes.visibility import SEPARATOR, is_seen_by, left_alone
from pb_headless.tables import changes, state

_READ = sa.select(state.c.id, state.c.version).where(state.c.id.in_((HEAD_ID, PRUNED_ID)))


@dataclass(frozen=True, slots=True)
class Change:
    """One entry: `op` is `create`, `update` or `delete`; `key` the row's primary key as text."""

    position: int
    table: str
    key: str
    op: str
    at: datetime  # aware, UTC
    seen_before: str | None = None  # the objects that served the row before, `|name|` each; None: not known
    seen_after: str | None = None  # ... and after the change
    entries: int = 1  # the row's entries after the reader's cursor (`latest_per_row`)
    unchanged: str | None = None  # the watched columns an update left alone, `,name,` each; None: not known

    def kept_out_of(self, name: str, columns: frozenset[str]) -> bool:
        """Whether this change provably left alone whether the row matches filters on `columns`."""
        return left_alone(self.op, self.unchanged, self.seen_before, self.seen_after, name, columns)

    @property
    def is_new(self) -> bool:
        """Whether the row did not exist at the reader's cursor: its only entry since is its creation."""
        return self.op == "create" and self.entries == 1

    def is_seen_by(self, name: str) -> bool:
        """Whether the object served the row before or after the change (not known: it did)."""
        return is_seen_by(self.seen_before, name) or is_seen_by(self.seen_after, name)

    def left(self, name: str) -> bool:
        """Whether the row left the object's view with this change (it served it before, not after)."""
        return self.seen_after is not None and not is_seen_by(self.seen_after, name)


@dataclass(frozen=True, slots=True)
class Bounds:
    head: int  # the last position given out (and committed)
    pruned: int  # every entry at or below it may have been removed


async def bounds(database: Database) -> Bounds:
    rows = {row[0]: int(row[1]) for row in await database.fetch_all(_READ)}
    return Bounds(head=rows.get(HEAD_ID, 0), pruned=rows.get(PRUNED_ID, 0))


async def changes_after(
    database: Database, position: int, limit: int, tables: Iterable[str] | None = None
) -> tuple[list[Change], int]:
    """Up to `limit` entries after `position` in commit order (every one of them), and the head.

    When fewer than `limit` come back, the caller has seen everything up to the head returned and
    may resume from it; otherwise it resumes from the last entry's position.
    """
    head = (await bounds(database)).head
    return await entries_between(database, position, head, limit, tables), head


async def entries_between(
    database: Database, position: int, head: int, limit: int, tables: Iterable[str] | None = None
) -> list[Change]:
    """Up to `limit` entries in `(position, head]`, in commit order; `head` one `bounds` gave."""
    query = sa.select(changes).where(changes.c.position > position, changes.c.position <= head)
    if tables is not None:
        query = query.where(changes.c.table_name.in_(list(tables)))
    rows = await database.fetch_all(query.order_by(changes.c.position).limit(limit))
    return [_change(row) for row in rows]


def _like(text: str) -> str:
    """`text` matched literally by LIKE … ESCAPE '\\'."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _seen_pattern(name: str) -> str:
    """The LIKE pattern of a `seen_before`/`seen_after` that names the object."""
    return f"%{SEPARATOR}{_like(name)}{SEPARATOR}%"


def seen_by(name: str) -> sa.ColumnElement[bool]:
    """The entries of changes to rows the object served before or after them (docs/changes.md, "Which
    changes an object shows"); entries that do not know (NULL) are kept, as before they knew."""
    pattern = sa.bindparam("seen_by", _seen_pattern(name), type_=sa.Text)  # '%' only in a value, never in SQL
    return sa.or_(
        changes.c.seen_after.is_(None),
        changes.c.seen_before.like(pattern, escape="\\"),
        changes.c.seen_after.like(pattern, escape="\\"),
    )


async def unmoved_rows(
    database: Database,
    table: str,
    name: str,
    position: int,
    head: int,
    keys: list[str],
    columns: frozenset[str],
) -> set[str]:
    """The rows among `keys` whose every entry in `(position, head]` is `Change.kept_out_of(name,
    columns)`: an update, of a row the object served before and after, that left all of `columns` alone."""
    seen = _seen_pattern(name)
    kept = sa.and_(
        changes.c.op == "update",
        changes.c.unchanged.is_not(None),
        changes.c.seen_before.like(sa.bindparam("pb_seen_before", seen, type_=sa.Text), escape="\\"),
        changes.c.seen_after.like(sa.bindparam("pb_seen_after", seen, type_=sa.Text), escape="\\"),
        *(
            changes.c.unchanged.like(
                sa.bindparam(f"pb_column_{n}", f"%,{_like(column)},%", type_=sa.Text), escape="\\"
            )
            for n, column in enumerate(sorted(columns))
        ),
    )
    query = (
        sa.select(changes.c.row_key)
        .where(changes.c.table_name == table, changes.c.position > position, changes.c.position <= head)
        .where(changes.c.row_key.in_(keys))
        .group_by(changes.c.row_key)
        .having(sa.func.sum(sa.case((kept, sa.literal_column("0")), else_=sa.literal_column("1"))) == 0)
    )
    return {row[0] for row in await database.fetch_all(query)}


async def latest_per_row(
    database: Database, table: str, position: int, head: int, limit: int, name: str | None = None
) -> list[Change]:
    """For each row of `table` changed in `(position, head]`, its latest entry, in the order of those
    entries; at most `limit`, each with how many entries the row has in the range. A row changed
    again later moves to where its latest change is. With
    `name`, only the changes of rows that object served before or after them count."""
    latest = (
        sa.select(sa.func.max(changes.c.position).label("position"), sa.func.count().label("pb_entries"))
        .where(changes.c.table_name == table, changes.c.position > position, changes.c.position <= head)
        .where(*([] if name is None else [seen_by(name)]))
        .group_by(changes.c.row_key)
        .order_by(sa.func.max(changes.c.position))
        .limit(limit)
        .subquery()
    )
    query = sa.select(changes, latest.c.pb_entries).join(latest, latest.c.position == changes.c.position)
    rows = await database.fetch_all(query.order_by(changes.c.position))
    return [replace(_change(row), entries=int(row._mapping["pb_entries"])) for row in rows]


def _change(row: Any) -> Change:
    at = row._mapping["changed_at"]
    if isinstance(at, str):  # SQLite's own clock text, when the driver hands it over untouched
        at = datetime.fromisoformat(at)
    return Change(
        position=int(row._mapping["position"]),
        table=row._mapping["table_name"],
        key=row._mapping["row_key"],
        op=row._mapping["op"],
        at=at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC),
        seen_before=row._mapping["seen_before"],
        seen_after=row._mapping["seen_after"],
        unchanged=row._mapping["unchanged"],
    )
