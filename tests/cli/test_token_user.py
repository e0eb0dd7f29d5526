"""`pb-headless token create --user ID`: the id is checked by the host's user loader when the host
hands one over (the example site does, through PB_APP); an id the console cannot check is refused
unless the user says it needs no check."""

from __future__ import annotations

import json

import pytest

from examples.site.users import UserStore
from tests.cli.console import SITE_HOOK, assert_refused, last_line, run
from tests.site.harness import open_site
from tests.support.databases import open_database, url_for


def create(url: str, name: str, user: str, **env: str):
    return run(
        "token", "create", "--name", name, "--scopes", "articles.read", "--user", user, database=url, env=env
    )


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
async def test_the_hosts_loader_accepts_an_active_user_and_refuses_others(kind, tmp_path):
    async with open_database(kind, tmp_path, installed=False):
        url = url_for(kind, tmp_path)
        async with open_site(url, logged_in=False) as browser:
            users = UserStore(browser.site.database)
            blocked = await users.create("former", "long enough")
            await users.set_blocked(blocked["id"], True)
            admin_id = browser.admin_id
            accepted = create(url, "editor-app", admin_id, PB_APP=SITE_HOOK)
            plain = last_line(accepted)
            assert accepted.stderr == ""
            assert_refused(
                create(url, "ghost-app", "4242", PB_APP=SITE_HOOK), "no active user with id '4242'"
            )
            assert_refused(create(url, "blocked-app", blocked["id"], PB_APP=SITE_HOOK), "no active user")
            assert_refused(create(url, "odd-app", "not-a-number", PB_APP=SITE_HOOK), "no active user")
            answer = await browser.api("/me", plain)
        listed = json.loads(run("token", "list", "--json", database=url).stdout)
    assert [token["name"] for token in listed] == ["editor-app"]  # nothing made for the refused ids
    assert listed[0]["user_id"] == admin_id
    assert answer.status_code == 200, answer.text


async def test_without_the_host_the_id_is_refused_unless_the_user_says_it_needs_no_check(tmp_path):
    url = f"sqlite:///{tmp_path}/plain.db"
    assert run("install", database=url).returncode == 0
    line = assert_refused(create(url, "app", "7"), "cannot check user id '7'")
    assert "PB_APP" in line and "--unchecked-user" in line
    assert json.loads(run("token", "list", "--json", database=url).stdout) == []
    result = run(
        "token",
        "create",
        "--name",
        "app",
        "--scopes",
        "articles.read",
        "--user",
        "7",
        "--unchecked-user",
        database=url,
    )
    assert last_line(result).startswith("pb_")
    assert json.loads(run("token", "list", "--json", database=url).stdout)[0]["user_id"] == "7"
