"""`pb-headless migrate [--to REV] [--dry-run|--sql]` and `migrate status`, as a user runs them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pb_headless.migrations.runner import head, steps_between
from tests.cli.console import assert_refused, run
from tests.site.commands import run_site, site_env
from tests.site.harness import copy_site_folder

LATEST = head()
# The steps after 0.1.0's tables, as the console script names them: "0002  change log: …".
AFTER_FIRST = [f"{step.revision}  {step.title}" for step in steps_between("0001", LATEST)]
REVISIONS = ", ".join(["0001", *(step.revision for step in steps_between("0001", LATEST))])


def database(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'site.db'}"


def tables(tmp_path: Path) -> set[str]:
    with sqlite3.connect(tmp_path / "site.db") as connection:
        return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_status_of_a_missing_sqlite_file_is_refused_and_creates_no_file(tmp_path: Path) -> None:
    result = run("migrate", "status", database=database(tmp_path))
    assert result.returncode != 0
    assert "there is no database file" in result.stderr
    assert "'pb-headless migrate') creates a new one" in result.stderr
    assert not (tmp_path / "site.db").exists()


def test_status_of_a_new_database_says_nothing_is_installed_and_changes_nothing(tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "site.db").close()  # an empty database file, as a host may create
    result = run("migrate", "status", database=database(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "current: not installed",
        f"latest:  {LATEST}",
        "pending: everything; 'pb-headless migrate' creates the tables",
    ]
    assert "pb_alembic_version" not in tables(tmp_path)


def test_migrate_goes_step_by_step_and_status_shows_what_is_pending(tmp_path: Path) -> None:
    url = database(tmp_path)
    first = run("migrate", "--to", "0001", database=url)
    assert first.returncode == 0, first.stderr
    assert "applied 0001" in first.stdout and "pb_changes" not in tables(tmp_path)
    status = run("migrate", "status", database=url)
    count = f"{len(AFTER_FIRST)} step" + ("s" if len(AFTER_FIRST) != 1 else "")
    pending = ["current: 0001", f"latest:  {LATEST}", f"pending: {count}", *(f"  {s}" for s in AFTER_FIRST)]
    assert status.stdout.splitlines() == pending
    dry = run("migrate", "--dry-run", database=url)
    would = ["the library's tables are at version 0001; would apply:", *(f"  {s}" for s in AFTER_FIRST)]
    assert dry.stdout.splitlines() == would
    assert "pb_changes" not in tables(tmp_path)
    done = run("migrate", database=url)
    applied = [
        f"migrated the library's tables from 0001 to {LATEST}:",
        *(f"  applied {s}" for s in AFTER_FIRST),
    ]
    assert done.stdout.splitlines() == applied
    assert {"pb_changes", "pb_api_tokens"} <= tables(tmp_path)
    again = run("migrate", database=url)
    assert again.stdout.strip() == f"the library's tables are at version {LATEST}; nothing to do"


def test_sql_prints_the_statements_of_the_pending_steps_for_a_dba_and_runs_none(tmp_path: Path) -> None:
    url = database(tmp_path)
    run("migrate", "--to", "0001", database=url)
    result = run("migrate", "--sql", database=url)
    assert result.returncode == 0, result.stderr
    assert "CREATE TABLE pb_changes (" in result.stdout
    assert "CREATE INDEX pb_changes_table_position ON pb_changes (table_name, position);" in result.stdout
    assert f"UPDATE pb_alembic_version SET version_num='{LATEST}' WHERE" in result.stdout
    assert "CREATE TABLE pb_api_tokens" not in result.stdout  # 0001 is done already
    assert "pb_changes" not in tables(tmp_path)


def test_a_revision_that_does_not_exist_or_lies_behind_is_refused_in_one_line(tmp_path: Path) -> None:
    url = database(tmp_path)
    unknown = run("migrate", "--to", "0099", database=url)
    assert_refused(unknown, f"no migration '0099': the revisions are {REVISIONS}")
    run("migrate", database=url)
    behind = run("migrate", "--to", "0001", database=url)
    assert_refused(behind, f"at {LATEST}, past 0001: migrations only go forward")
    assert_refused(run("migrate", "--dry-run", "--to", "0099", database=url), "no migration '0099'")
    assert_refused(run("migrate", "status", "--sql", database=url), "'migrate status' changes nothing")
    assert_refused(run("migrate", "--sql", "--dry-run", database=url), "not allowed with argument")


def test_status_on_the_example_sites_database_names_the_current_and_latest_version(tmp_path: Path) -> None:
    env = site_env(copy_site_folder(tmp_path / "folder"), tmp_path / "site.db")
    assert run_site("init", env=env).returncode == 0
    result = run("migrate", "status", database=env["PB_DATABASE_URL"])
    assert result.stdout.splitlines() == [f"current: {LATEST}", f"latest:  {LATEST}", "pending: 0 steps"]
