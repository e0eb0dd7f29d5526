"""`pb-headless` from a shell: every command, and every refusal as one line with a non-zero exit."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.databases import URLS, open_database

SCRIPT = Path(sys.executable).with_name("pb-headless")


def run(*args: str, database: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [str(SCRIPT), *(["--database", database] if database else []), *args]
    environment = {key: value for key, value in os.environ.items() if key != "PB_DATABASE_URL"}
    return subprocess.run(command, capture_output=True, text=True, env={**environment, **(env or {})}, timeout=60)


def assert_refused(result: subprocess.CompletedProcess, fragment: str = "") -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pb-headless: ")
    assert "Traceback" not in result.stderr
    assert fragment in lines[0]


@pytest.fixture(scope="module")
def installed_template(tmp_path_factory):
    """One installed database file per module, copied per test: each command run costs a process start."""
    path = tmp_path_factory.mktemp("template") / "cli.db"
    assert run("install", database=f"sqlite:///{path}").returncode == 0
    return path


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path}/cli.db"


@pytest.fixture
def installed_url(tmp_path, installed_template):
    import shutil

    shutil.copy(installed_template, tmp_path / "installed.db")
    return f"sqlite:///{tmp_path}/installed.db"


def test_install_is_idempotent(url):
    assert run("install", database=url).returncode == 0
    assert run("install", database=url).returncode == 0


def test_token_create_prints_the_plain_value_as_the_last_line(url):
    run("install", database=url)
    result = run("token", "create", "--name", "app", "--scopes", "articles.read,news.*", database=url)
    assert result.returncode == 0
    plain = result.stdout.strip().splitlines()[-1]
    assert plain.startswith("pb_") and len(plain) == 49


def test_token_list_never_prints_plain_values_or_hashes(url):
    run("install", database=url)
    plain = run("token", "create", "--name", "app", "--scopes", "a.read", database=url).stdout.split()[-1]
    import hashlib

    digest = hashlib.sha256(plain.encode()).hexdigest()
    for args in (("token", "list"), ("token", "list", "--json")):
        output = run(*args, database=url).stdout
        assert "app" in output and plain not in output and digest not in output
    listed = json.loads(run("token", "list", "--json", database=url).stdout)
    assert listed[0]["name"] == "app" and listed[0]["scopes"] == ["a.read"] and listed[0]["enabled"] is True


def test_reissue_disable_enable_delete(url):
    run("install", database=url)
    first = run("token", "create", "--name", "app", "--scopes", "a.read", database=url).stdout.split()[-1]
    reissued = run("token", "reissue", "app", database=url)
    assert reissued.returncode == 0 and reissued.stdout.split()[-1] not in ("", first)
    assert run("token", "disable", "app", database=url).returncode == 0
    assert json.loads(run("token", "list", "--json", database=url).stdout)[0]["enabled"] is False
    assert run("token", "enable", "app", database=url).returncode == 0
    assert run("token", "delete", "app", database=url).returncode == 0
    assert json.loads(run("token", "list", "--json", database=url).stdout) == []


def test_the_database_url_comes_from_the_environment_when_not_given(url):
    assert run("install", env={"PB_DATABASE_URL": url}).returncode == 0
    assert run("settings", "get", "service_cors_paths", env={"PB_DATABASE_URL": url}).stdout.strip() == "api/*"


def test_settings_get_set_list(url):
    run("install", database=url)
    assert run("settings", "set", "service_cors_origins", "https://app.example.com", database=url).returncode == 0
    assert run("settings", "get", "service_cors_origins", database=url).stdout.strip() == "https://app.example.com"
    listed = json.loads(run("settings", "list", "--json", database=url).stdout)
    assert listed["service_cors_max_age"] == "86400"


@pytest.mark.parametrize(("args", "fragment"), [
    (("token", "create", "--name", "x", "--scopes", "Bad.Scope"), "invalid scope"),
    (("token", "create", "--name", "x", "--scopes", ""), "at least one scope"),
    (("token", "create", "--name", "x", "--scopes", "a.read", "--expires-at", "2001-01-01"), "past"),
    (("token", "create", "--name", "x", "--scopes", "a.read", "--expires-at", "soon"), "invalid expiry"),
    (("token", "create", "--name", "", "--scopes", "a.read"), "needs a name"),
    (("token", "create", "--scopes", "a.read"), "--name"),
    (("token", "reissue", "ghost"), "no token named"),
    (("token", "disable", "ghost"), "no token named"),
    (("token", "enable", "ghost"), "no token named"),
    (("token", "delete", "ghost"), "no token named"),
    (("token", "frobnicate"), "invalid choice"),
    (("settings", "get", "no_such_key"), "no setting"),
    (("settings",), "required"),
    (("dance",), "invalid choice"),
    (("openapi", "--api-file", "/nonexistent/api.py"), "api.py"),
])
def test_bad_input_exits_non_zero_with_one_line(installed_url, args, fragment):
    assert_refused(run(*args, database=installed_url), fragment)


def test_a_duplicate_name_is_refused(url):
    run("install", database=url)
    run("token", "create", "--name", "app", "--scopes", "a.read", database=url)
    assert_refused(run("token", "create", "--name", "app", "--scopes", "a.read", database=url), "already exists")


def test_commands_before_install_say_what_to_do(url):
    assert_refused(run("token", "list", database=url), "pb-headless install")


def test_no_database_and_bad_urls_are_refused():
    assert_refused(run("install"), "PB_DATABASE_URL")
    assert_refused(run("install", database="nosuch://x/y"), "unsupported database URL")
    assert_refused(run("install", database="postgresql://nobody@127.0.0.1:1/none"))


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
async def test_the_console_script_works_on_the_server_databases(kind, tmp_path):
    async with open_database(kind, tmp_path, installed=False):
        url = URLS[kind]
        assert run("install", database=url).returncode == 0
        created = run("token", "create", "--name", "app", "--scopes", "*", database=url)
        assert created.returncode == 0, created.stderr
        assert json.loads(run("token", "list", "--json", database=url).stdout)[0]["name"] == "app"
