"""The console script as a newcomer meets it in docs/getting-started.md's host folder (issue 25, point 5):
every mistake there gets an answer that says what to do, and the host's own app is accepted as `--app`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.console import ROOT, assert_refused, last_line, run

FILE_BLOCK = re.compile(r"<!-- file: (\S+) -->\n```python\n(.*?)```", re.DOTALL)


@pytest.fixture
def host_folder(tmp_path: Path) -> Path:
    """models.py, api.py and app.py exactly as getting-started shows them, and the installed site.db."""
    page = (ROOT / "docs" / "getting-started.md").read_text()
    for name, text in FILE_BLOCK.findall(page):
        (tmp_path / name).write_text(text)
    assert {"models.py", "api.py", "app.py"} <= {path.name for path in tmp_path.iterdir()}
    assert in_folder(tmp_path, "install").returncode == 0
    return tmp_path


def in_folder(folder: Path, *args: str):
    return run(*args, database="sqlite:///site.db", cwd=folder)


def create(folder: Path, *extra: str):
    return in_folder(folder, "token", "create", "--name", "my app", "--scopes", "articles.*", *extra)


def with_app(folder: Path, *args: str):
    """`token create` with the host's own ASGI app named, as `uvicorn app:app` names it."""
    return in_folder(folder, "--app", "app:app", "token", "create", *args)


def test_openapi_accepts_the_asgi_app_the_host_runs(host_folder):
    result = in_folder(host_folder, "openapi", "--app", "app:app")
    assert result.returncode == 0, result.stderr
    assert "/objects/articles" in json.loads(result.stdout)["paths"]
    assert in_folder(host_folder, "openapi", "--app", "app:api").stdout == result.stdout


def test_openapi_with_nothing_to_document_says_in_one_line_what_it_wants(host_folder):
    assert "--app app:app" in assert_refused(in_folder(host_folder, "openapi"))


@pytest.mark.parametrize("attribute", ["app:home", "app:lifespan", "app:Mount"])
def test_an_app_option_naming_something_else_is_one_line(host_folder, attribute):
    assert_refused(in_folder(host_folder, "openapi", "--app", attribute))


def test_a_scope_that_reaches_nothing_published_is_made_with_a_warning(host_folder):
    result = with_app(host_folder, "--name", "typo", "--scopes", "artciles.read")
    assert last_line(result).startswith("pb_")
    assert "'artciles.read' reaches nothing the site publishes" in result.stderr
    fine = with_app(host_folder, "--name", "ok", "--scopes", "articles.*")
    assert fine.stderr == ""


def test_creating_a_token_whose_name_exists_says_how_to_get_a_value(host_folder):
    first = last_line(create(host_folder))
    line = assert_refused(create(host_folder), "already exists")
    assert 'token reissue --name "my app"' in line and "--reissue-if-exists" in line
    again = create(host_folder, "--reissue-if-exists")
    second = last_line(again)
    assert second.startswith("pb_") and second != first
    assert "reissued the existing token 'my app'" in again.stdout


def test_reissue_if_exists_gives_the_token_the_scopes_asked_for(host_folder):
    in_folder(host_folder, "token", "create", "--name", "my app", "--scopes", "articles.read")
    in_folder(host_folder, "token", "disable", "my app")
    assert create(host_folder, "--reissue-if-exists").returncode == 0
    [token] = json.loads(in_folder(host_folder, "token", "list", "--json").stdout)
    assert (token["scopes"], token["enabled"]) == (["articles.*"], True)


def test_reissue_takes_the_name_as_an_argument_or_as_an_option(host_folder):
    create(host_folder)
    by_option = in_folder(host_folder, "token", "reissue", "--name", "my app")
    by_argument = in_folder(host_folder, "token", "reissue", "my app")
    assert last_line(by_option) != last_line(by_argument)
    assert in_folder(host_folder, "token", "disable", "--name", "my app").returncode == 0


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("token", "reissue"), "needs a name: NAME or --name NAME"),
        (("token", "delete", "a", "--name", "b"), "two names"),
    ],
)
def test_reissue_without_a_name_or_with_two_is_a_usage_error(host_folder, args, fragment):
    result = in_folder(host_folder, *args)
    assert result.returncode == 2
    assert fragment in result.stderr


def test_a_missing_sqlite_file_is_refused_and_not_created(tmp_path):
    result = run("token", "list", database="sqlite:///typo.db", cwd=tmp_path)
    line = assert_refused(result, "no database file")
    assert "pb-headless install" in line
    assert not (tmp_path / "typo.db").exists()
    assert run("install", database="sqlite:///typo.db", cwd=tmp_path).returncode == 0
    assert (tmp_path / "typo.db").is_file()


def test_an_acting_user_the_console_cannot_check_is_refused_unless_told(host_folder):
    line = assert_refused(create(host_folder, "--user", "99"), "cannot check user id '99'")
    assert "--app" in line and "--unchecked-user" in line
    assert in_folder(host_folder, "token", "list").stdout.strip() == "no tokens"
    assert last_line(create(host_folder, "--user", "99", "--unchecked-user")).startswith("pb_")


def test_a_host_without_a_user_loader_checks_no_acting_user(host_folder):
    result = with_app(host_folder, "--name", "w", "--scopes", "articles.*", "--user", "7")
    assert last_line(result).startswith("pb_") and result.stderr == ""
