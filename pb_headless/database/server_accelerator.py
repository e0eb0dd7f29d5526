"""PostgreSQL's and MariaDB's accelerator: deep pages in key order from noted keys.

The keys are noted and used as on SQLite (database/positions.py); what tells that the rows are as
they were is the change log's head with the identity of the table's triggers
(database/change_triggers.py), read before the keys are noted and again after the page. A table
without a working change-log trigger (the change log turned off, the trigger refused) is read the
ordinary way, through the deferred join. Everything else is the plain accelerator's.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from databases import Database

from pb_headless.database.accelerator_interface import Accelerator, DeepPageStatements
from pb_headless.database.backends import backend_for
from pb_headless.database.positions import Positions


class ServerAccelerator(Accelerator):
    """One per `Database` (database/accelerators.py), holding its noted keys."""

    deep_pages = True

    def __init__(self) -> None:
        self.positions = Positions()

    async def deep_page(
        self,
        database: Database,
        statements: DeepPageStatements,
        values: dict[Any, Any],
        table: str,
        pk: str,
    ) -> Sequence[Any] | None:
        async def version() -> Hashable | None:
            return await backend_for(database).change_log_triggers.version(table)

        return await self.positions.page(database, version, statements, values, pk)
