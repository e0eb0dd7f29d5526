"""Databases of each kind (sqlite, postgresql, mariadb) emptied and NOT installed: migrations start there."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from databases import Database

from tests.support.databases import DATABASE_KINDS, open_database


@pytest.fixture(params=DATABASE_KINDS)
async def empty_database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Database]:
    async with open_database(request.param, tmp_path_factory.mktemp("db"), installed=False) as database:
        yield database
