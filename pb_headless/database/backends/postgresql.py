"""PostgreSQL: RETURNING, advisory locks, and a failed statement that spoils its transaction."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from pb_headless.database import change_triggers, explain
from pb_headless.database.backends.base import Backend

POSTGRESQL_MIGRATION_LOCK = 0x70626D6967726174  # pg_advisory_lock takes a bigint: "pbmigrat" in ASCII


class PostgreSQLBackend(Backend):
    name = "postgresql"
    async_driver = "asyncpg"
    skip_locked_of = True
    unique_by_transaction_lock = True
    tables_query = "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
    table_exists_query = (
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name = :name"
    )

    returns_inserted_key = True
    returns_inserted_keys = True
    error_spoils_transaction = True
    index_holds_key = False  # a deep page's keys come from the index alone when it names them

    @functools.cached_property
    def change_log_triggers(self) -> change_triggers.ChangeTriggers:
        return change_triggers.postgresql_triggers(self.database)

    def lock_due_rows(self, query: sa.Select, table: sa.Table) -> sa.Select:
        return query.with_for_update(skip_locked=True, of=table)  # not the rows its subqueries read

    def take_migration_lock(self, connection: Connection) -> tuple[sa.TextClause, dict[str, Any]]:
        connection.exec_driver_sql(f"SELECT pg_advisory_lock({POSTGRESQL_MIGRATION_LOCK})")
        return sa.text(f"SELECT pg_advisory_unlock({POSTGRESQL_MIGRATION_LOCK})"), {}

    async def take_transaction_lock(self, key: int) -> None:
        await self.database.execute(sa.select(sa.func.pg_advisory_xact_lock(key)))

    nulls_sort_low = False
    # asyncpg types a parameter after its column (int4, float4) and fails on a wider value.
    widens_number_parameters = True

    async def planner_estimate(self, count: sa.Select[Any]) -> int | None:
        return explain.postgresql_rows(await self.database.fetch_val(explain.Explain(count)))
