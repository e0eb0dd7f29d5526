"""Every test starts from a database as a fresh install leaves it, whatever the test before it did.

The test databases are installed once per session and brought back to that state before each test
(tests/support/installed.py); these tests hold that to what a new install gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from pb_headless import SettingsStore, TokenStore
from pb_headless.migrations.catalog import existing_tables
from pb_headless.tables import metadata
from tests.support.databases import DATABASE_KINDS, open_database


async def library_rows(database) -> dict[str, list[tuple]]:
    return {
        name: sorted(tuple(map(str, row)) for row in await database.fetch_all(sa.select(table)))
        for name, table in metadata.tables.items()
    }


def folder(tmp_path: Path, name: str) -> Path:
    (tmp_path / name).mkdir()
    return tmp_path / name


@pytest.mark.parametrize("kind", DATABASE_KINDS)
async def test_what_one_test_wrote_is_gone_for_the_next(kind, tmp_path):
    async with open_database(kind, folder(tmp_path, "fresh"), installed=False) as database:
        pass  # an empty database: the next one is installed anew
    async with open_database(kind, folder(tmp_path, "installed")) as database:
        tables, rows = await existing_tables(database), await library_rows(database)
        first, _ = await TokenStore(database).create("first", "*")
    async with open_database(kind, folder(tmp_path, "used")) as database:
        await database.execute("CREATE TABLE site_notes (id INTEGER PRIMARY KEY)")
        await TokenStore(database).create("someone", "*")
        await SettingsStore(database).set("service_cors_origins", "https://app.example")
    async with open_database(kind, folder(tmp_path, "next")) as database:
        assert await existing_tables(database) == tables
        assert await library_rows(database) == rows
        token, _ = await TokenStore(database).create("first", "*")
        assert token.id == first.id  # the ids count from the start again


@pytest.mark.parametrize("kind", DATABASE_KINDS)
async def test_a_library_table_a_test_altered_is_installed_anew(kind, tmp_path):
    async with open_database(kind, folder(tmp_path, "altered")) as database:
        await database.execute("ALTER TABLE pb_changes DROP COLUMN seen_after")
    async with open_database(kind, folder(tmp_path, "next")) as database:
        await database.execute(
            "INSERT INTO pb_changes (table_name, row_key, op, changed_at, seen_after)"
            " VALUES ('t', '1', 'create', '2026-01-01 00:00:00', '|t|')"
        )
        assert await database.fetch_val("SELECT seen_after FROM pb_changes") == "|t|"
