"""`pb-headless webhooks edit|test` and the names the webhook commands take: an edit keeps the secret
and the log, a test event is a real signed POST, `--name` works wherever a name does, and object names
the site does not publish are refused with the nearest one."""

from __future__ import annotations

import asyncio
import json

import sqlalchemy as sa
from databases import Database
from standardwebhooks import Webhook

from examples.site.commands import init
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.store import WebhookStore
from tests.cli.console import SITE_HOOK, assert_refused, last_line, run
from tests.site.harness import site_config
from tests.webhooks.receiver import running_receiver

CREATE = ("webhooks", "create", "--name", "app", "--url", "https://app.example.com/")


def _installed(tmp_path) -> str:
    url = f"sqlite:///{tmp_path}/cli.db"
    assert run("install", database=url).returncode == 0
    return url


async def _secret_and_log(url: str) -> tuple[str, int]:
    table = webhook_tables.webhooks
    async with Database(url) as database:
        secret = await database.fetch_val(sa.select(table.c.secret).where(table.c.name == "app"))
        return secret, len(await WebhookStore(database).deliveries("app"))


def test_edit_changes_what_is_given_and_keeps_the_secret_and_the_delivery_log(tmp_path):
    url = _installed(tmp_path)
    secret = last_line(run(*CREATE[:-1], "https://hooks.invalid/", "--objects", "articles", database=url))
    tested = run("webhooks", "test", "app", database=url)  # fails: the name never resolves
    edited = run(
        *("webhooks", "edit", "--name", "app", "--url", "https://hooks.example.com/v2"),
        *("--events", "delete", "--disable"),
        database=url,
    )
    nothing = run("webhooks", "edit", "app", database=url)
    [listed] = json.loads(run("webhooks", "list", "--json", database=url).stdout)

    assert_refused(tested, "the test event articles.test to https://hooks.invalid/ failed: ")
    assert edited.returncode == 0 and "its secret and delivery log are kept" in edited.stdout
    assert (listed["url"], listed["objects"], listed["events"], listed["enabled"]) == (
        "https://hooks.example.com/v2",
        ["articles"],
        ["delete"],
        False,
    )
    assert asyncio.run(_secret_and_log(url)) == (secret, 1)
    assert_refused(
        nothing, "nothing to change: give --url, --objects, --events, --filter, --enable or --disable"
    )


def test_every_webhook_command_that_acts_on_one_endpoint_takes_name_or_dash_dash_name(tmp_path):
    url = _installed(tmp_path)
    run(*CREATE, database=url)

    assert last_line(run("webhooks", "disable", "--name", "app", database=url)) == "disabled webhook 'app'"
    assert last_line(run("webhooks", "enable", "--name", "app", database=url)) == "enabled webhook 'app'"
    assert last_line(run("webhooks", "deliveries", "--name", "app", database=url)) == "no deliveries yet"
    assert_refused(run("webhooks", "disable", "app", "--name", "other", database=url), "two names given")
    assert_refused(run("webhooks", "test", database=url), "webhooks test needs a name: NAME or --name NAME")
    assert last_line(run("webhooks", "delete", "--name", "app", database=url)) == "deleted webhook 'app'"


def test_with_the_site_named_an_unpublished_object_is_refused_with_the_nearest_name(tmp_path):
    url = f"sqlite:///{tmp_path}/site.db"
    asyncio.run(init(site_config(url)))
    site = {"PB_APP": SITE_HOOK}
    typo = run(*CREATE, "--objects", "artciles", database=url, env=site)
    made = run(*CREATE, "--objects", "articles", database=url, env=site)
    edit = run("webhooks", "edit", "app", "--objects", "articles,autors", database=url, env=site)
    unchecked = run("webhooks", "edit", "app", "--objects", "authors", database=url)

    assert_refused(typo, "unknown object 'artciles': did you mean 'articles'?")
    assert made.returncode == 0 and made.stderr == ""
    assert_refused(edit, "unknown object 'autors': did you mean 'authors'?")
    assert (
        unchecked.returncode == 0 and "were not checked against what the site publishes" in unchecked.stderr
    )


def test_filter_is_stored_for_one_object_and_with_the_site_named_checked_against_its_fields(tmp_path):
    url = f"sqlite:///{tmp_path}/site.db"
    asyncio.run(init(site_config(url)))
    site = {"PB_APP": SITE_HOOK}
    everything = run(*CREATE, "--filter", "filter[title]=x", database=url)
    unknown = run(*CREATE, "--objects", "articles", "--filter", "filter[nothing]=x", database=url, env=site)
    unchecked = run(*CREATE, "--objects", "articles", "--filter", "filter[title]=Hello", database=url)
    listed = run("webhooks", "list", database=url)
    removed = run("webhooks", "edit", "app", "--filter", "", database=url)

    assert_refused(everything, "a filter applies to one object: name exactly one in objects")
    assert_refused(unknown, "the filter is refused: articles does not filter by filter[nothing]")
    assert unchecked.returncode == 0 and "the filter was not checked" in unchecked.stderr
    assert "filter filter[title]=Hello, events" in unchecked.stdout
    assert "\tfilter=filter[title]=Hello\t" in listed.stdout
    assert removed.returncode == 0 and "filter=" not in last_line(removed)


async def test_test_sends_a_signed_object_test_event_and_prints_the_answer(tmp_path):
    url = _installed(tmp_path)
    run("settings", "set", "service_webhooks_allow_private", "yes", database=url)
    async with running_receiver() as receiver:
        created = await asyncio.to_thread(
            run, "webhooks", "create", "--name", "app", "--url", receiver.url, database=url
        )
        refused = await asyncio.to_thread(run, "webhooks", "test", "--name", "app", database=url)
        sent = await asyncio.to_thread(run, "webhooks", "test", "app", "--object", "articles", database=url)
    [logged] = json.loads(run("webhooks", "deliveries", "app", "--json", database=url).stdout)

    assert_refused(refused, "takes every object: give --object NAME")
    [post] = receiver.received
    assert Webhook(last_line(created)).verify(post.body, post.headers)["type"] == "articles.test"
    assert last_line(sent).startswith(f"sent the test event articles.test to {receiver.url}: answer 200 in ")
    assert (logged["event"], logged["status"], logged["tries"], logged["record_id"]) == (
        "articles.test",
        "success",
        1,
        "",
    )
    assert logged["created_at"] and logged["last_try_at"]


def test_without_the_sender_create_is_refused_with_the_command_that_installs_it(tmp_path):
    url = _installed(tmp_path)
    blocked = tmp_path / "blocked" / "httpcore"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('httpcore is not installed here')\n")
    refused = run(*CREATE, database=url, env={"PYTHONPATH": str(blocked.parent)})

    assert_refused(refused, "pip install 'pb_headless[webhooks]'")
    assert last_line(run("webhooks", "list", database=url)) == "no webhooks"
