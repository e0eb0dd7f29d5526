"""The system settings store (`service_cors_*` and friends), shared through the database."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database

from pb_headless.state import bump_version
from pb_headless.tables import settings as settings_table

# Settings are typed by people in an admin form or a shell, so they read `yes`/`on` too; a query
# string's booleans are stricter (`pb_headless.fields.text.FLAG_TRUE_WORDS`: only `true|1`).
SETTING_ON_WORDS = frozenset({"1", "true", "yes", "on"})


def is_on(value: str | None) -> bool:
    """Boolean settings read `1|true|yes|on` (any case) as on; anything else, or missing, is off."""
    return value is not None and value.strip().lower() in SETTING_ON_WORDS


class SettingsStore:
    """Reads and writes system settings; every write moves the shared state version."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def all(self) -> dict[str, str]:
        rows = await self.database.fetch_all(sa.select(settings_table.c.key, settings_table.c.value))
        return {row[0]: row[1] for row in rows}

    async def get(self, key: str) -> str | None:
        query = sa.select(settings_table.c.value).where(settings_table.c.key == key)
        return await self.database.fetch_val(query)

    async def set(self, key: str, value: str) -> None:
        async with self.database.transaction():
            if await self.get(key) is None:
                await self.database.execute(settings_table.insert().values(key=key, value=value))
            else:
                query = settings_table.update().where(settings_table.c.key == key).values(value=value)
                await self.database.execute(query)
            await bump_version(self.database)

    async def delete(self, key: str) -> None:
        async with self.database.transaction():
            await self.database.execute(settings_table.delete().where(settings_table.c.key == key))
            await bump_version(self.database)
