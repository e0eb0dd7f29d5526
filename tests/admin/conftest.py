"""The example site, started on each database with a signed-in administrator, for the admin pages' tests."""

from __future__ import annotations

import pytest

from tests.site.harness import open_site


@pytest.fixture
async def browser(database):
    """A signed-in browser on the example site running on `database` (sqlite, postgresql, mariadb)."""
    async with open_site(str(database.url)) as signed_in:
        yield signed_in


@pytest.fixture
async def sqlite_browser(sqlite_database):
    """The same on SQLite only, for behaviour that does not depend on the database."""
    async with open_site(str(sqlite_database.url)) as signed_in:
        yield signed_in
