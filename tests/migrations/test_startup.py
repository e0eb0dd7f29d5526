"""An instance never serves against library tables it does not know: the start-up check."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from databases import Database

from pb_headless import ApiRegistry, HeadlessAPI
from pb_headless.migrations import runner
from pb_headless.migrations.errors import MigrationError, SchemaMismatch
from pb_headless.migrations.migrate import upgrade
from pb_headless.tables import settings as system_settings
from tests.migrations.support import versions


async def lifespan_start(api: HeadlessAPI) -> dict:
    """What the API answers a server's lifespan start with."""
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[dict] = []

    async def receive() -> dict:
        return next(messages)

    async def send(message: dict) -> None:
        sent.append(message)

    await api({"type": "lifespan"}, receive, send)
    return sent[0]


async def test_older_tables_stop_the_start_with_the_command_that_fixes_them(empty_database: Database) -> None:
    await upgrade(empty_database, runner.FIRST)
    answer = await lifespan_start(HeadlessAPI(empty_database, ApiRegistry()))
    assert answer["type"] == "lifespan.startup.failed"
    assert answer["message"] == (
        f"the library's tables are at version 0001, this release needs {runner.head()}: run "
        "'pb-headless migrate' or start the API with HeadlessAPI(..., migrate=True) (docs/upgrading.md)"
    )
    assert await versions(empty_database) == ["0001"]


async def test_a_host_that_opts_in_has_older_tables_migrated_at_start(empty_database: Database) -> None:
    await upgrade(empty_database, runner.FIRST)
    answer = await lifespan_start(HeadlessAPI(empty_database, ApiRegistry(), migrate=True))
    assert answer == {"type": "lifespan.startup.complete"}
    assert await versions(empty_database) == [runner.head()]


async def test_tables_a_newer_release_migrated_stop_the_start_of_older_code(empty_database: Database) -> None:
    await upgrade(empty_database)
    await empty_database.execute(sa.text("UPDATE pb_alembic_version SET version_num = '9999'"))
    for migrate in (False, True):
        with pytest.raises(SchemaMismatch) as raised:
            await HeadlessAPI(empty_database, ApiRegistry(), migrate=migrate).startup()
        assert str(raised.value).startswith(
            "the library's tables are at version 9999, which this release of pb_headless does not know"
        )
    assert await versions(empty_database) == ["9999"]


async def test_a_database_never_installed_stops_the_start_with_what_to_run(empty_database: Database) -> None:
    with pytest.raises(SchemaMismatch, match="not installed in this database: run 'pb-headless migrate'"):
        await HeadlessAPI(empty_database, ApiRegistry()).startup()


async def test_a_host_that_opts_in_has_an_empty_database_installed_at_start(empty_database: Database) -> None:
    answer = await lifespan_start(HeadlessAPI(empty_database, ApiRegistry(), migrate=True))
    assert answer == {"type": "lifespan.startup.complete"}
    assert await versions(empty_database) == [runner.head()]
    settings = await empty_database.fetch_all(sa.select(system_settings.c.key))
    assert "service_cors_paths" in {row[0] for row in settings}


async def test_a_failing_step_at_start_is_one_line_naming_the_step(empty_database: Database) -> None:
    await upgrade(empty_database, runner.FIRST)
    await empty_database.execute(sa.text("CREATE TABLE pb_changes (id INTEGER PRIMARY KEY)"))
    api = HeadlessAPI(empty_database, ApiRegistry(), migrate=True)
    answer = await lifespan_start(api)
    assert answer["type"] == "lifespan.startup.failed"
    assert answer["message"].startswith("migration step 0002 (change log: pb_changes")
    assert "\n" not in answer["message"]
    with pytest.raises(MigrationError):
        await api.startup()
