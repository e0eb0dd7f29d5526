"""The library's tables move by Alembic revisions: what a new, a 0.1.0 and a half-way database become."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from databases import Database

from pb_headless import install
from pb_headless.migrations import engine, runner
from pb_headless.migrations.errors import MigrationError
from pb_headless.migrations.migrate import read_schema, upgrade
from pb_headless.tables import metadata
from tests.migrations.support import schema_differences, tables, versions

AFTER_FIRST = [step.revision for step in runner.steps_between(runner.FIRST, runner.head())]  # 0002, …


async def test_the_revisions_build_exactly_the_tables_the_code_declares(empty_database: Database) -> None:
    # Step by step from nothing, as an old database would move: no shortcut through create_all.
    for step in runner.steps_between(None, runner.head()):
        await upgrade(empty_database, step.revision)
    assert await versions(empty_database) == [runner.head()]
    assert await schema_differences(empty_database) == []


async def test_a_new_database_gets_the_latest_tables_at_once_and_the_same_schema(
    empty_database: Database,
) -> None:
    outcome = await upgrade(empty_database, metadata=metadata)
    assert outcome.created and outcome.after == runner.head()
    assert await versions(empty_database) == [runner.head()]
    assert await schema_differences(empty_database) == []


async def test_a_database_without_a_version_table_but_with_the_0_1_0_tables_is_stamped_first(
    empty_database: Database,
) -> None:
    await upgrade(empty_database, runner.FIRST)
    await empty_database.execute(sa.text("DROP TABLE pb_alembic_version"))  # as 0.1.0 left it
    assert (await read_schema(empty_database)).legacy
    outcome = await upgrade(empty_database)
    assert outcome.stamped and [step.revision for step in outcome.applied] == AFTER_FIRST
    assert await versions(empty_database) == [runner.head()]
    assert await schema_differences(empty_database) == []


async def test_install_leaves_a_hosts_own_alembic_version_table_alone(empty_database: Database) -> None:
    host_table = "CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)"
    await empty_database.execute(sa.text(host_table))
    await empty_database.execute(sa.text("INSERT INTO alembic_version VALUES ('host_rev_1')"))
    await install(empty_database)
    await install(empty_database)
    rows = await empty_database.fetch_all(sa.text("SELECT version_num FROM alembic_version"))
    assert [row[0] for row in rows] == ["host_rev_1"]
    assert await versions(empty_database) == [runner.head()]


async def test_install_on_a_database_at_the_latest_version_changes_nothing(empty_database: Database) -> None:
    await install(empty_database)
    outcome = await upgrade(empty_database)
    assert outcome.applied == [] and not outcome.created and outcome.before == runner.head()
    await install(empty_database)
    assert await versions(empty_database) == [runner.head()]


async def _instances(database: Database, count: int) -> list[Database]:
    others = [Database(str(database.url)) for _ in range(count)]
    for other in others:
        await other.connect()
    return others


async def test_instances_upgrading_at_once_apply_each_step_once(empty_database: Database) -> None:
    await upgrade(empty_database, runner.FIRST)
    instances = await _instances(empty_database, 3)
    try:
        # Straight to the locked part, so every instance really contends for the lock.
        outcomes = await asyncio.gather(
            *(engine.run_locked(one, lambda c: runner.upgrade(c, runner.head())) for one in instances)
        )
    finally:
        for one in instances:
            await one.disconnect()
    applied = [step.revision for outcome in outcomes for step in outcome.applied]
    assert applied == AFTER_FIRST
    assert sorted(outcome.before or "" for outcome in outcomes) == ["0001", runner.head(), runner.head()]
    assert await versions(empty_database) == [runner.head()]


async def test_instances_installing_a_new_database_at_once_create_it_once(empty_database: Database) -> None:
    instances = await _instances(empty_database, 3)
    try:
        await asyncio.gather(*(install(one) for one in instances))
    finally:
        for one in instances:
            await one.disconnect()
    assert await versions(empty_database) == [runner.head()]
    assert await schema_differences(empty_database) == []
    # Rows 1 to 4 (docs/upgrading.md): versions, the change log's head and how far it was pruned.
    assert len(await empty_database.fetch_all(sa.text("SELECT id FROM pb_state"))) == 4


async def test_a_failing_step_names_itself_and_leaves_the_tables_at_the_version_before(
    empty_database: Database,
) -> None:
    await upgrade(empty_database, runner.FIRST)
    # A pb_changes the step does not expect: its index on (table_name, position) cannot be made.
    await empty_database.execute(sa.text("CREATE TABLE pb_changes (id INTEGER PRIMARY KEY)"))
    with pytest.raises(MigrationError) as raised:
        await upgrade(empty_database)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("migration step 0002 (change log")
    assert message.endswith("the library's tables stay at 0001")
    assert await versions(empty_database) == ["0001"]
    # Once the cause is gone, the same step runs.
    await empty_database.execute(sa.text("DROP TABLE pb_changes"))
    await upgrade(empty_database)
    assert await versions(empty_database) == [runner.head()]
    assert "pb_changes" in await tables(empty_database)


async def test_a_step_stopped_half_way_runs_again_to_the_end(empty_database: Database) -> None:
    # What MariaDB, which commits each DDL statement at once, can be left with: step 0002's table made,
    # its index not, the version still 0001.
    await upgrade(empty_database, runner.FIRST)
    await empty_database.execute(
        sa.text(
            "CREATE TABLE pb_changes (position BIGINT NOT NULL PRIMARY KEY, table_name VARCHAR(64) NOT NULL, "
            "row_key VARCHAR(255) NOT NULL, op VARCHAR(6) NOT NULL, changed_at TIMESTAMP NOT NULL)"
        )
    )
    outcome = await upgrade(empty_database)
    assert [step.revision for step in outcome.applied] == AFTER_FIRST
    assert await versions(empty_database) == [runner.head()]
    differences = await schema_differences(empty_database)
    assert not [change for change in differences if change[0] == "add_index"]


async def test_kept_answers_move_to_their_tokens_hash_and_those_of_deleted_tokens_go(
    empty_database: Database,
) -> None:
    await upgrade(empty_database, "0004")
    moment = "2026-01-01 00:00:00"
    for token_id, digest in ((1, "a" * 64), (2, "b" * 64)):
        await empty_database.execute(
            sa.text(
                "INSERT INTO pb_api_tokens (id, name, token_hash, prefix, scopes, enabled, created_at, "
                f"updated_at) VALUES ({token_id}, 't{token_id}', '{digest}', 'pb_x', '[\"*\"]', "
                f"{'TRUE' if empty_database.url.dialect != 'sqlite' else 1}, '{moment}', '{moment}')"
            )
        )
    for token_id in (1, 2, 3):  # token 3 was deleted: its answer must not survive under any token
        await empty_database.execute(
            sa.text(
                "INSERT INTO pb_idempotency (token_id, idempotency_key, request_hash, status, answer, "
                f"created_at, expires_at) VALUES ({token_id}, 'k', 'h{token_id}', 201, '{{}}', "
                f"'{moment}', '{moment}')"
            )
        )
    await upgrade(empty_database)
    await upgrade(empty_database)  # nothing left to do
    assert await versions(empty_database) == [runner.head()]
    assert await schema_differences(empty_database) == []
    rows = await empty_database.fetch_all(
        sa.text("SELECT token_hash, request_hash FROM pb_idempotency ORDER BY request_hash")
    )
    assert [(row[0], row[1]) for row in rows] == [("a" * 64, "h1"), ("b" * 64, "h2")]


async def test_the_idempotency_step_stopped_half_way_runs_again_to_the_end(empty_database: Database) -> None:
    # MariaDB commits each DDL statement at once: the new table made and filled, the old one dropped,
    # the rename not done, the version still 0004.
    await upgrade(empty_database, "0004")
    await empty_database.execute(sa.text("DROP TABLE pb_idempotency"))
    await empty_database.execute(
        sa.text(
            "CREATE TABLE pb_idempotency_next (token_hash VARCHAR(64) NOT NULL, idempotency_key VARCHAR(255) "
            "NOT NULL, request_hash VARCHAR(64) NOT NULL, status INTEGER, answer TEXT, created_at TIMESTAMP "
            "NOT NULL, expires_at TIMESTAMP NOT NULL, PRIMARY KEY (token_hash, idempotency_key))"
        )
    )
    await upgrade(empty_database)
    assert await versions(empty_database) == [runner.head()]
    assert "pb_idempotency_next" not in await tables(empty_database)
    differences = await schema_differences(empty_database)
    assert not [change for change in differences if change[0] in ("add_index", "add_table", "remove_table")]
