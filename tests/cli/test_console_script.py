"""`pb-headless` from a shell: every command, and every refusal as one line with a non-zero exit."""

import json

import pytest

from tests.cli.console import assert_refused, run
from tests.support.databases import URLS, open_database


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
    assert (
        run("settings", "get", "service_cors_paths", env={"PB_DATABASE_URL": url}).stdout.strip() == "api/*"
    )


def test_settings_get_set_list(url):
    run("install", database=url)
    assert (
        run("settings", "set", "service_cors_origins", "https://app.example.com", database=url).returncode
        == 0
    )
    assert (
        run("settings", "get", "service_cors_origins", database=url).stdout.strip()
        == "https://app.example.com"
    )
    listed = json.loads(run("settings", "list", "--json", database=url).stdout)
    assert listed["service_cors_max_age"] == "86400"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
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
    ],
)
def test_bad_input_exits_non_zero_with_one_line(installed_url, args, fragment):
    assert_refused(run(*args, database=installed_url), fragment)


def test_a_duplicate_name_is_refused(url):
    run("install", database=url)
    run("token", "create", "--name", "app", "--scopes", "a.read", database=url)
    assert_refused(
        run("token", "create", "--name", "app", "--scopes", "a.read", database=url), "already exists"
    )


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


# -- the command line itself ------------------------------------------------------------------
def test_the_database_option_is_accepted_after_the_command_too(installed_url):
    created = run("token", "create", "--name", "late", "--scopes", "a.read", "--database", installed_url)
    assert created.returncode == 0, created.stderr
    listed = run("token", "list", "--json", "--database", installed_url)
    assert [token["name"] for token in json.loads(listed.stdout)] == ["late"]
    got = run("settings", "get", "service_cors_paths", "--database", installed_url)
    assert got.stdout.strip() == "api/*"


def test_a_database_option_after_the_command_wins_over_one_before_it(installed_url, tmp_path):
    result = run(
        "--database",
        f"sqlite:///{tmp_path}/other.db",
        "settings",
        "get",
        "service_cors_paths",
        "--database",
        installed_url,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "api/*"


def test_version_prints_the_library_version():
    import pb_headless

    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"pb-headless {pb_headless.__version__}"


def test_every_command_and_argument_has_help_text():
    import argparse

    from pb_headless.cli.parser import build_parser

    def walk(parser, trail):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    assert choice.help, f"{trail} {choice.dest} has no help"
                for name, sub in action.choices.items():
                    assert sub.description, f"{trail} {name} has no description"
                    yield from walk(sub, f"{trail} {name}")
            else:
                yield trail, action

    for trail, action in walk(build_parser(), "pb-headless"):
        assert action.help and action.help != argparse.SUPPRESS, (
            f"{trail} {action.option_strings or action.dest}"
        )


def test_help_of_a_command_shows_its_arguments():
    result = run("token", "create", "--help")
    assert result.returncode == 0
    for text in ("--name", "--scopes", "--expires-at", "--user", "--database", "acting user"):
        assert text in result.stdout


def test_help_and_version_load_neither_the_database_layer_nor_the_web_framework():
    # The console script answers --help at once because these load only when a command runs.
    import subprocess
    import sys

    probe = (
        "import sys\nfrom pb_headless.cli import main\n"
        "for argv in (['--help'], ['--version'], ['token', 'create', '--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "heavy = ('sqlalchemy', 'starlette', 'databases', 'orjson', 'pb_headless.api')\n"
        "print('LOADED', [name for name in heavy if name in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "LOADED []"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--database", "sqlite:////nonexistent/folder/site.db", "install"), "does not exist"),
        (("--database", "sqlite:///", "install"), "names no database file"),
        (("--database", "sqlite://", "install"), "names no database file"),
        (("--database", "", "install"), "PB_DATABASE_URL"),
        (("--database", "site.db", "install"), "unsupported database URL"),
        (("--database", "mysql://root@127.0.0.1:1/none", "install"), "cannot connect"),
        (("--database", "postgresql://nobody@[::1", "install"), ""),
        (("--database",), "expected one argument"),
        (
            ("token", "create", "--name", "x", "--scopes", "a.read", "--expires-at", "2027-13-45T99:00"),
            "expiry",
        ),
        (("token", "create", "--name", "x" * 5000, "--scopes", "a.read"), ""),
        (("token", "create", "--name", "x", "--scopes", "a.read,статьи.read"), "scope"),
        (("settings", "set", "service_cors_max_age", "-1"), "whole number"),
    ],
)
def test_no_input_gives_a_traceback(installed_url, tmp_path, args, fragment):
    needs_database = "--database" not in args
    result = run(*args, database=installed_url if needs_database else None)
    assert_refused(result, fragment)


def test_a_folder_given_as_the_database_file_is_one_line(tmp_path):
    assert_refused(run("install", database=f"sqlite:///{tmp_path}"), "is a folder")


def test_a_file_that_is_not_a_database_is_one_line(tmp_path):
    (tmp_path / "notes.db").write_text("not a database, just some words\n" * 100)
    assert_refused(run("install", database=f"sqlite:///{tmp_path}/notes.db"))


def test_pb_debug_adds_the_traceback_of_a_database_failure(tmp_path):
    (tmp_path / "notes.db").write_text("not a database, just some words\n" * 100)
    result = run("install", database=f"sqlite:///{tmp_path}/notes.db", env={"PB_DEBUG": "1"})
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("pb-headless: ")
