"""`pb-headless token create --user ID`: the id is checked by the host's user loader when the host
hands one over (the example site does, through PB_APP), and the console says when it cannot check."""

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


async def test_without_a_host_loader_the_token_is_made_and_the_console_says_the_id_was_not_checked(tmp_path):
    url = f"sqlite:///{tmp_path}/plain.db"
    assert run("install", database=url).returncode == 0
    result = create(url, "app", "7")
    assert last_line(result).startswith("pb_")
    assert "not checked" in result.stderr and "PB_APP" in result.stderr
    assert json.loads(run("token", "list", "--json", database=url).stdout)[0]["user_id"] == "7"
