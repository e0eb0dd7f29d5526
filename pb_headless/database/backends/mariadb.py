"""MariaDB (and MySQL): named locks, descending indexes, and index keys of bounded size."""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateIndex

from pb_headless.database import change_triggers, explain
from pb_headless.database.backends.base import Backend

MARIADB_MIGRATION_LOCK_SECONDS = 600  # how long GET_LOCK waits for another instance's migration
MARIADB_DESCENDING = (10, 8)  # the first MariaDB that reads a descending index as one


class MariaDBBackend(Backend):
    name = "mysql"
    async_driver = "aiomysql"
    unique_by_named_lock = True
    takes_unix_socket = True
    tables_query = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
    table_exists_query = (
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = DATABASE() AND table_name = :name"
    )

    # MariaDB cannot read an ascending index backwards to break ties by key ascending, and cannot
    # index TEXT or keys over 3072 bytes without a prefix (constructor/indexes.py).
    makes_descending_indexes = True
    index_key_bytes = 3072
    names_key_order_index = True

    @functools.cached_property
    def change_log_triggers(self) -> change_triggers.ChangeTriggers:
        return change_triggers.mariadb_triggers(self.database)

    def lock_due_rows(self, query: sa.Select, table: sa.Table) -> sa.Select:
        return query.with_for_update(skip_locked=True)  # MariaDB knows no `OF`

    async def create_index(self, index: sa.Index) -> None:
        # MariaDB's CREATE INDEX has IF NOT EXISTS, MySQL's has not: ask first.
        table = index.table
        if table is not None:  # an index always belongs to its table here; the attribute is optional
            rows = await self.database.fetch_all(f"SHOW INDEX FROM `{table.name}`")
            if any(row._mapping["Key_name"] == index.name for row in rows):
                return
        await self.database.execute(str(CreateIndex(index).compile(dialect=self.dialect())))

    async def reads_descending_indexes(self) -> bool:
        """MariaDB reads descending indexes from 10.8 on (an older one makes a plain copy of the
        ascending index), MySQL from 8.0."""
        version = str(await self.database.fetch_val("SELECT VERSION()"))
        numbers = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
        return numbers >= (MARIADB_DESCENDING if "mariadb" in version.lower() else (8, 0))

    def take_migration_lock(self, connection: Connection) -> tuple[sa.TextClause, dict[str, Any]]:
        # GET_LOCK names are server-wide (64 characters at most), so the name carries the database's.
        lock_name = "SELECT LEFT(CONCAT('pb_headless_migrate:', DATABASE()), 64)"
        name = connection.exec_driver_sql(lock_name).scalar()
        got = connection.execute(sa.text("SELECT GET_LOCK(:name, :wait)"),
                                 {"name": name, "wait": MARIADB_MIGRATION_LOCK_SECONDS}).scalar()  # fmt: skip
        if got != 1:
            raise RuntimeError(
                f"another instance has held the migration lock for {MARIADB_MIGRATION_LOCK_SECONDS} s; "
                "not migrating"
            )
        return sa.text("SELECT RELEASE_LOCK(:name)"), {"name": name}

    async def take_named_lock(self, name: str, seconds: int) -> bool:
        return await self.database.fetch_val(sa.select(sa.func.get_lock(self._own(name), seconds))) == 1

    async def release_named_lock(self, name: str) -> None:
        await self.database.fetch_val(sa.select(sa.func.release_lock(self._own(name))))

    def _own(self, name: str) -> str:
        """GET_LOCK names are the server's, not a database's: `name` made this database's own, so sites
        sharing a server never wait on each other's locks (64 characters, MariaDB's limit)."""
        scoped = f"{self.database.url.database}\0{name}"
        return "pb_lock_" + hashlib.blake2b(scoped.encode(), digest_size=16).hexdigest()

    sorts_rows_for_mixed_order = True

    async def planner_estimate(self, count: sa.Select[Any]) -> int | None:
        return explain.mariadb_rows(await self.database.fetch_all(explain.Explain(count)))
