"""The change log's one owner: `ChangeLog`, made from the database's backend (docs/changes.md,
docs/architecture.md "The change log").

Written by the database: triggers on every published table (their SQL is the backend's,
database/change_triggers.py) record each committed create, update and delete. Read by the feed and
the stream (changes/feed.py, changes/hub.py) and by the webhooks' fan-out (webhooks/outbox.py),
all through this object; lists' tags read each table's latest position with one compiled statement
of their own (changes/positions.py), which takes no entry and so needs no rule.

The one rule every reader follows: read the head first, then entries at or below it. A trigger takes
its position by moving the head row, which stays locked until its transaction ends, so a writer that
comes second waits: position N+1 cannot commit before N, and the head read is the last committed
one. Every entry at or below it is therefore committed and visible, and no entry below it can still
appear: reading `(after, head]` in position order skips nothing, and a reader that resumes from the
last entry it took (or from the head, when it took fewer than it asked for) never reads one twice.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from databases import Database

from pb_headless.changes.visibility import SEPARATOR, WatchedTable, is_seen_by, left_alone, recorded_sql
from pb_headless.database.backends import Backend, backend_for
from pb_headless.database.change_triggers import HEAD_ID, PRUNED_ID, ChangeTriggers, Recorded
from pb_headless.database.database_errors import is_duplicate_key, is_unavailable
from pb_headless.database.dialect import utcnow
from pb_headless.tables import changes, state

log = logging.getLogger("pb_headless")

_READ = sa.select(state.c.id, state.c.version).where(state.c.id.in_((HEAD_ID, PRUNED_ID)))
PRUNE_BATCH = 1000
PRUNE_BATCHES = 20  # per run: a run is bounded work, the next run goes on

Tables = Mapping[str, "WatchedTable | str"]  # table → what its triggers record (a bare key: no visibility)


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


class ChangeLog:
    """The change log of one database: its triggers kept to the published tables, and every read of it."""

    def __init__(self, backend: Backend) -> None:
        self.database = backend.database
        self.triggers = backend.change_log_triggers  # their names, SQL and catalog, per database

    @classmethod
    def of(cls, database: Database) -> ChangeLog:
        """The change log of the host's database (for code handed only the `Database`)."""
        return cls(backend_for(database))

    # -- reads ---------------------------------------------------------------------------------
    async def bounds(self) -> Bounds:
        rows = {row[0]: int(row[1]) for row in await self.database.fetch_all(_READ)}
        return Bounds(head=rows.get(HEAD_ID, 0), pruned=rows.get(PRUNED_ID, 0))

    async def entries_after(
        self, position: int, limit: int, tables: Iterable[str] | None = None
    ) -> tuple[list[Change], int]:
        """Up to `limit` entries after `position` in commit order (every one of them), and the head.

        When fewer than `limit` come back, the caller has seen everything up to the head returned and
        resumes from it; otherwise it resumes from the last entry's position (the module's rule).
        """
        head = (await self.bounds()).head
        return await self.entries_between(position, head, limit, tables), head

    async def entries_between(
        self, position: int, head: int, limit: int, tables: Iterable[str] | None = None
    ) -> list[Change]:
        """Up to `limit` entries in `(position, head]`, in commit order; `head` one `bounds` gave."""
        query = sa.select(changes).where(changes.c.position > position, changes.c.position <= head)
        if tables is not None:
            query = query.where(changes.c.table_name.in_(list(tables)))
        rows = await self.database.fetch_all(query.order_by(changes.c.position).limit(limit))
        return [_change(row) for row in rows]

    async def moved_tables(self, after: int, head: int) -> set[str]:
        """The tables with an entry in `(after, head]`."""
        query = (
            sa.select(changes.c.table_name)
            .where(changes.c.position > after, changes.c.position <= head)
            .distinct()
        )
        return {row[0] for row in await self.database.fetch_all(query)}

    async def latest_per_row(
        self, table: str, position: int, head: int, limit: int, name: str | None = None
    ) -> list[Change]:
        """For each row of `table` changed in `(position, head]`, its latest entry, in the order of those
        entries; at most `limit`, each with how many entries the row has in the range. A row changed
        again later moves to where its latest change is. With `name`, only the changes of rows that
        object served before or after them count."""
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
        rows = await self.database.fetch_all(query.order_by(changes.c.position))
        return [replace(_change(row), entries=int(row._mapping["pb_entries"])) for row in rows]

    async def unmoved_rows(
        self, table: str, name: str, position: int, head: int, keys: list[str], columns: frozenset[str]
    ) -> set[str]:
        """The rows among `keys` whose every entry in `(position, head]` is `Change.kept_out_of(name,
        columns)`: an update, of a row the object served before and after, that left all of `columns`
        alone."""
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
        return {row[0] for row in await self.database.fetch_all(query)}

    async def version(self, table: str) -> Hashable | None:
        """The head with the identity of `table`'s triggers (None where the database gives none): equal
        for two reads between which no row of the table changed (database/change_triggers.py)."""
        return await self.triggers.version(table)

    # -- retention -----------------------------------------------------------------------------
    async def prune(self, days: int, *, batch: int = PRUNE_BATCH, batches: int = PRUNE_BATCHES) -> int:
        """Remove entries older than `days` days, a batch at a time; how many were removed.

        Each batch first records the last position it removes (row `PRUNED_ID` of `pb_state`), in the
        same transaction as the delete, so a cursor from before it is answered 410 `cursor_expired`
        rather than silently skipping what was removed. Entries go in position order only: the first
        one still young enough stops the batch, so what stays is every entry after that position."""
        cutoff = utcnow() - timedelta(days=days)
        removed = 0
        for _ in range(batches):
            pruned = (await self.bounds()).pruned
            query = (
                sa.select(changes.c.position, changes.c.changed_at)
                .where(changes.c.position > pruned)
                .order_by(changes.c.position)
                .limit(batch)
            )
            rows = await self.database.fetch_all(query)
            old = [int(row[0]) for row in _older(rows, cutoff)]
            if not old:
                break
            async with self.database.transaction():
                last = old[-1]
                moved = sa.case((state.c.version < last, last), else_=state.c.version)
                recorded = state.update().where(state.c.id == PRUNED_ID).values(version=moved)
                await self.database.execute(recorded)
                await self.database.execute(changes.delete().where(changes.c.position <= last))
            removed += len(old)
            if len(old) < len(rows) or len(rows) < batch:
                break
        return removed

    # -- the triggers --------------------------------------------------------------------------
    def wanted_triggers(self, tables: Tables) -> dict[str, str]:
        """Trigger name → table, for published tables given as table → what they record."""
        return _names(self.triggers, self._recorded(tables))

    async def present_triggers(self) -> dict[str, str]:
        """The change-log triggers in the database's current schema: name → table."""
        return await self.triggers.present()

    async def sync_triggers(self, tables: Tables) -> frozenset[str]:
        """Make the change-log triggers exactly those of `tables` (table → what it records); the tables
        whose every trigger is in place (a table the database refused one for is not among them).

        Safe to run from several instances at once: every statement is one another instance may
        already have run (`IF NOT EXISTS`, `IF EXISTS`, or a duplicate refused and ignored).
        """
        recorded = self._recorded(tables)
        wanted = _names(self.triggers, recorded)
        present = await self.present_triggers()
        for name, table in present.items():
            if wanted.get(name) != table:
                await self.database.execute(self.triggers.drop(name, table))
        missing = {name: table for name, table in wanted.items() if present.get(name) != table}
        if not missing:
            return frozenset(tables)
        await self.triggers.prepare()
        refused: set[str] = set()
        for name, table in missing.items():
            try:
                await self.triggers.execute(self.triggers.create(name, table, recorded[table][0]))
            except Exception as error:
                if is_duplicate_key(error) or "already exists" in str(error):
                    continue  # another instance made it between our look and our create
                if is_unavailable(error):
                    raise
                # A view, or a database user without the TRIGGER privilege: serving goes on, unrecorded.
                refusal = "pb_headless: no change log for table %s: its trigger was refused: %s"
                log.warning(refusal, table, error)
                refused.add(table)
        return frozenset(tables) - refused

    def _recorded(self, tables: Tables) -> dict[str, tuple[Recorded, str]]:
        """Table → what its triggers record, as this database's SQL, and the digest of the rules."""
        return {
            table: recorded_sql(self.triggers, WatchedTable(watch) if isinstance(watch, str) else watch)
            for table, watch in tables.items()
        }


def _names(triggers: ChangeTriggers, recorded: Mapping[str, tuple[Recorded, str]]) -> dict[str, str]:
    """Trigger name → table."""
    wanted = {}
    for table, (what, rules) in recorded.items():
        wanted.update({name: table for name in triggers.names(table, what, rules)})
    return wanted


def _older(rows: Collection[Any], cutoff: datetime) -> list[Any]:
    """The leading rows older than the cutoff."""
    taken = []
    for row in rows:
        at = row[1]
        if at is None or (at.replace(tzinfo=None) if hasattr(at, "replace") else at) >= cutoff:
            break
        taken.append(row)
    return taken


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
