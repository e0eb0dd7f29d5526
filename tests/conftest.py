"""Fixtures shared by every HTTP-level test: a real database of each kind and a host app around the API.

PostgreSQL and MariaDB tests skip with the reason when their server does not answer; with
PB_REQUIRE_SERVICES=1 (set by .ci/run) they fail instead, so CI always runs them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from tests.support.databases import DATABASE_KINDS, drop_session_databases, open_database
from tests.support.host import Host, build_host


@pytest.fixture(params=DATABASE_KINDS)
async def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator:
    """A connected, empty database of each kind (sqlite, postgresql, mariadb) with the library installed."""
    async with open_database(request.param, tmp_path_factory.mktemp("db")) as db:
        yield db


@pytest.fixture
async def sqlite_database(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator:
    """SQLite only: for behaviour that does not depend on the database."""
    async with open_database("sqlite", tmp_path_factory.mktemp("db")) as db:
        yield db


@pytest.fixture
async def mariadb_database(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator:
    """MariaDB only: for what concerns MariaDB alone (a server shared by several databases)."""
    async with open_database("mariadb", tmp_path_factory.mktemp("db")) as db:
        yield db


@pytest.fixture
async def host_factory():
    """`await host_factory(database, registry, **options)` → a running Host (see support/host.py)."""
    hosts: list[Host] = []

    async def make(database, registry=None, **options) -> Host:
        host = await build_host(database, registry, **options)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        await host.client.aclose()


@pytest.fixture
async def demo(database, host_factory) -> Host:
    """The demo site's schema and rows on each database, served with the demo declarations."""
    from tests.support.demo import create_demo, demo_registry

    await create_demo(database)
    return await host_factory(database, demo_registry())


def pytest_report_header(config: pytest.Config) -> str:
    required = os.environ.get("PB_REQUIRE_SERVICES") == "1"
    return f"pb_headless: external databases {'required' if required else 'optional (skipped when absent)'}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import asyncio

    asyncio.run(drop_session_databases())
