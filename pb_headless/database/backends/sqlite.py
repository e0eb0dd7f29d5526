"""SQLite: one writer at a time, the database a file, its migration lock the write lock."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sqlite3
from contextlib import AbstractAsyncContextManager
from typing import Any

import sqlalchemy as sa
from databases import Database
from sqlalchemy.engine import Connection

from pb_headless.database import change_triggers, internals
from pb_headless.database.backends.base import Backend

SQLITE_MIGRATION_BUSY_SECONDS = 600  # the migration's connection waits this long for the write lock


class SQLiteBackend(Backend):
    name = "sqlite"
    async_driver = "aiosqlite"
    locks_rows = False
    # RETURNING arrived in SQLite 3.35: before it, each row's key is the driver's lastrowid.
    returns_inserted_keys = sqlite3.sqlite_version_info >= (3, 35)
    drops_indexes_with_column = False
    is_file = True
    migration_steps_in_savepoints = True
    tables_query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    table_exists_query = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = :name"

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        # This process's writers queue here, first come first served, before asking for the write
        # lock: SQLite's own busy handler retries with growing sleeps, and under many writers one of
        # them can starve past the database time limit while the others keep winning the lock.
        self.writers = asyncio.Lock()

    def process_turn(self) -> AbstractAsyncContextManager[None]:
        """This process's turn among the writers of other processes on the same file, where the
        library keeps the file's connections (sqlite/writer_turns.py); else no turn."""
        turns = getattr(internals.pool_of(self.database), "writer_turns", None)
        return turns.turn() if turns is not None else contextlib.nullcontext()

    @functools.cached_property
    def change_log_triggers(self) -> change_triggers.ChangeTriggers:
        return change_triggers.sqlite_triggers(self.database)

    async def lock_for_writing(self, write_first: Any) -> None:
        # A deferred transaction that reads first would deadlock with a waiting writer; a write that
        # matches no row takes the write lock so the second writer waits its turn instead.
        await self.database.execute(write_first)

    async def drop_indexes_over(self, table: str, column: str, prefix: str) -> list[str]:
        query = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :table"
        dropped = []
        for row in await self.database.fetch_all(query, {"table": table}):
            name = str(row[0])
            if not name.startswith(prefix):
                continue
            columns = {info[2] for info in await self.database.fetch_all(f'PRAGMA index_info("{name}")')}
            if column in columns:
                await self.database.execute(f'DROP INDEX IF EXISTS "{name}"')
                dropped.append(name)
        return dropped

    def prepare_migration_connection(self, connection: Connection) -> None:
        """SQLite's Python driver starts no transaction before DDL, so a failed step would stay half
        applied. SQLAlchemy's recipe, for this connection only: the driver leaves transactions
        alone, and every transaction is a BEGIN IMMEDIATE, which takes the database's write lock at
        once: that is the migration lock, waited for up to SQLITE_MIGRATION_BUSY_SECONDS."""
        driver_connection = connection.connection.dbapi_connection
        assert driver_connection is not None  # a connection of engine(), open
        driver_connection.isolation_level = None
        cursor = driver_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_MIGRATION_BUSY_SECONDS * 1000}")
        cursor.close()

        @sa.event.listens_for(connection, "begin")
        def begin_immediate(connection: Connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    def take_migration_lock(self, connection: Connection) -> None:
        return None

    folds_text_in_python = True
