"""`python -m examples.site init | admin create | serve`: what a user sees in the console."""

from __future__ import annotations

import sqlalchemy as sa
from databases import Database

from tests.site.commands import free_port, run_site, site_env
from tests.site.harness import copy_site_folder


def refused_with_one_line(result) -> str:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    return lines[0]


async def count(url: str, table: str) -> int:
    database = Database(url)
    await database.connect()
    try:
        return int(await database.fetch_val(sa.select(sa.func.count()).select_from(sa.table(table))))
    finally:
        await database.disconnect()


async def test_init_installs_everything_and_running_it_again_changes_nothing(tmp_path):
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db")
    first = run_site("init", env=env)
    assert first.returncode == 0, first.stderr
    assert "added 5 demo rows to articles" in first.stdout
    second = run_site("init", env=env)
    assert second.returncode == 0, second.stderr
    assert "demo rows" not in second.stdout
    url = env["PB_DATABASE_URL"]
    assert await count(url, "articles") == 5 and await count(url, "authors") == 2
    assert await count(url, "pb_system_settings") >= 6
    assert await count(url, "site_settings") == 1  # the session key, made once


async def test_the_database_defaults_to_sqlite_in_the_site_folder(tmp_path):
    site = copy_site_folder(tmp_path / "site")
    result = run_site("init", env=site_env(site))
    assert result.returncode == 0, result.stderr
    assert (site / "site.db").is_file()


async def test_admin_create_prints_the_new_users_id_and_refuses_a_second_one_of_the_same_name(tmp_path):
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db")
    run_site("init", env=env)
    created = run_site("admin", "create", "--username", "editor", "--password", "long enough", env=env)
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip().splitlines()[-1] == "1"
    again = run_site("admin", "create", "--username", "editor", "--password", "other password", env=env)
    assert "already exists" in refused_with_one_line(again)
    database = Database(env["PB_DATABASE_URL"])
    await database.connect()
    try:
        stored = await database.fetch_val("SELECT password_hash FROM site_users")
    finally:
        await database.disconnect()
    assert stored.startswith("scrypt$") and "long enough" not in stored


async def test_bad_input_exits_non_zero_with_one_line_and_no_traceback(tmp_path):
    site = copy_site_folder(tmp_path / "site")
    env = site_env(site, tmp_path / "site.db")
    cases = [
        (("admin", "create", "--username", "x"), env, "--password"),
        (("admin", "create", "--username", "bad name", "--password", "long enough"), env, "username"),
        (("admin", "create", "--username", "ok", "--password", "short"), env, "at least 8"),
        (("serve", "--port", "http"), env, "invalid port"),
        (("launch",), env, "invalid choice"),
        ((), env, "required"),
        (("init",), site_env(tmp_path / "nowhere", tmp_path / "site.db"), "PB_SITE_DIR"),
        (("init",), site_env(site, "not a url"), "PB_DATABASE_URL"),
        (("init",), site_env(site, "nosuchdb://x/y"), ""),
        (("init",), site_env(site, tmp_path / "missing" / "dir" / "site.db"), ""),
    ]
    for args, case_env, expected in cases:
        line = refused_with_one_line(run_site(*args, env=case_env))
        assert line.startswith("examples.site: error: ")
        assert expected in line, (args, line)


async def test_serve_refuses_an_uninitialised_database_in_one_line(tmp_path):
    env = site_env(copy_site_folder(tmp_path / "site"), tmp_path / "site.db")
    line = refused_with_one_line(
        run_site("serve", "--host", "127.0.0.1", "--port", str(free_port()), env=env)
    )
    assert "not initialised" in line and "init" in line


async def test_serve_stops_at_a_broken_declaration_file_with_its_message(tmp_path):
    site = copy_site_folder(tmp_path / "site")
    env = site_env(site, tmp_path / "site.db")
    run_site("init", env=env)
    api_file = site / "core" / "App" / "api.py"
    api_file.write_text(api_file.read_text().replace('"per_page": 10', '"per_page": 10, "colour": "red"'))
    line = refused_with_one_line(run_site("serve", "--port", str(free_port()), env=env))
    assert str(api_file) in line and "'articles'" in line and "'colour'" in line
