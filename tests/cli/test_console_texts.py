"""What the console says besides results: help that is current, one spelling of --app, `migrate --sql`
with nothing pending, and expired tokens marked in `token list`."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import utcnow
from pb_headless.tables import DEFAULT_SETTINGS, tokens
from tests.cli.console import assert_refused, run


def test_settings_help_lists_every_setting_there_is():
    text = " ".join(run("settings", "--help").stdout.split())
    for key in DEFAULT_SETTINGS:
        assert key in text
    assert "the service_cors_* keys" not in text


def test_app_is_spelled_module_colon_attribute_in_help_and_in_every_refusal(tmp_path):
    url = f"sqlite:///{tmp_path}/site.db"
    assert run("install", database=url).returncode == 0
    helps = run("--help").stdout + run("token", "create", "--help").stdout + run("openapi", "--help").stdout

    assert "--app MODULE:ATTRIBUTE" in helps and "CALLABLE" not in helps
    assert_refused(run("--app", "app", "openapi", database=url), "--app: 'app' is not MODULE:ATTRIBUTE")
    assert_refused(
        run("openapi", database=url, env={"PB_APP": "app"}), "PB_APP: 'app' is not MODULE:ATTRIBUTE"
    )
    assert_refused(run("openapi", database=url, cwd=tmp_path), "--app MODULE:ATTRIBUTE")


def test_migrate_sql_with_nothing_pending_says_so_as_an_sql_comment(tmp_path):
    url = f"sqlite:///{tmp_path}/site.db"
    assert run("install", database=url).returncode == 0
    printed = run("migrate", "--sql", database=url)

    assert printed.returncode == 0 and printed.stderr == ""
    assert printed.stdout.startswith("-- the library's tables are at version ")
    assert "nothing to do, no SQL to run" in printed.stdout


def test_token_list_marks_an_expired_token_in_lines_and_in_json(tmp_path):
    url = f"sqlite:///{tmp_path}/site.db"
    assert run("install", database=url).returncode == 0
    for name in ("live", "old", "off"):
        run("token", "create", "--name", name, "--scopes", "articles.read", database=url)
    run("token", "disable", "off", database=url)
    asyncio.run(_expire(url, "old"))
    lines = {
        line.split("\t")[0]: line.split("\t")
        for line in run("token", "list", database=url).stdout.split("\n")
    }
    listed = {item["name"]: item for item in json.loads(run("token", "list", "--json", database=url).stdout)}

    assert [lines[name][3] for name in ("live", "old", "off")] == ["enabled", "expired", "disabled"]
    assert lines["old"][4].endswith(" (expired)") and lines["live"][4] == "expires=never"
    assert [listed[name]["state"] for name in ("live", "old", "off")] == ["enabled", "expired", "disabled"]
    assert (listed["old"]["expired"], listed["live"]["expired"]) == (True, False)


async def _expire(url: str, name: str) -> None:
    """Expiry in the past cannot be set through the console (it is refused), so time is moved here."""
    async with Database(url) as database:
        past = utcnow() - timedelta(days=1)
        await database.execute(sa.update(tokens).where(tokens.c.name == name).values(expires_at=past))
