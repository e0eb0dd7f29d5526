"""`pb-headless webhooks …`: register endpoints, list them without secrets, read and redeliver the log."""

import asyncio
import base64
import json

from databases import Database

from pb_headless.webhooks.store import WebhookStore
from tests.cli.console import assert_refused, last_line, run


def test_create_prints_the_secret_last_and_list_shows_everything_but_the_secret(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    run("install", database=url)
    created = run(
        *("webhooks", "create", "--name", "indexer", "--url", "https://hooks.example.com/pb"),
        *("--objects", "articles,authors", "--events", "create,delete"),
        database=url,
    )
    secret = last_line(created)
    run("webhooks", "create", "--name", "all", "--url", "https://all.example.com/", database=url)
    listed = run("webhooks", "list", "--json", database=url)

    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 24
    assert secret not in listed.stdout and secret[6:] not in run("webhooks", "list", database=url).stdout
    assert json.loads(listed.stdout) == [
        {
            "name": "all",
            "url": "https://all.example.com/",
            "objects": ["*"],
            "events": ["create", "update", "delete"],
            "filter": None,
            "enabled": True,
            "note": None,
            "last_delivery_status": None,
            "last_try_at": None,
            "failing": False,
            "failing_since": None,
            "last_error": None,
            "created_at": json.loads(listed.stdout)[0]["created_at"],
        },
        {
            "name": "indexer",
            "url": "https://hooks.example.com/pb",
            "objects": ["articles", "authors"],
            "events": ["create", "delete"],
            "filter": None,
            "enabled": True,
            "note": None,
            "last_delivery_status": None,
            "last_try_at": None,
            "failing": False,
            "failing_since": None,
            "last_error": None,
            "created_at": json.loads(listed.stdout)[1]["created_at"],
        },
    ]


def test_a_private_address_is_registered_with_a_warning_that_deliveries_to_it_are_refused(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    run("install", database=url)
    address = ("--url", "http://127.0.0.1:9000/hook")
    created = run("webhooks", "create", "--name", "local", *address, database=url)

    assert last_line(created).startswith("whsec_")
    assert created.stderr.startswith("pb-headless: warning: the destination 127.0.0.1 is a private")
    assert "service_webhooks_allow_private" in created.stderr


def test_disable_enable_and_delete_change_what_list_shows(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    run("install", database=url)
    run("webhooks", "create", "--name", "app", "--url", "https://app.example.com/", database=url)

    assert last_line(run("webhooks", "disable", "app", database=url)) == "disabled webhook 'app'"
    assert "\tdisabled\t" in run("webhooks", "list", database=url).stdout
    assert last_line(run("webhooks", "enable", "app", database=url)) == "enabled webhook 'app'"
    assert last_line(run("webhooks", "delete", "app", database=url)) == "deleted webhook 'app'"
    assert last_line(run("webhooks", "list", database=url)) == "no webhooks"


def test_refusals_are_one_line(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    run("install", database=url)
    create = ("webhooks", "create", "--name", "app")

    assert_refused(run(*create, "--url", "ftp://example.com/", database=url), "is not an http:// or https://")
    unknown_event = run(*create, "--url", "https://a.example/", "--events", "publish", database=url)
    assert_refused(unknown_event, "unknown event 'publish'")
    assert_refused(run("webhooks", "disable", "nobody", database=url), "no webhook named 'nobody'")
    assert_refused(run("webhooks", "redeliver", "abc", database=url), "is not a delivery id")


def test_deliveries_lists_the_log_and_redeliver_schedules_a_failed_one_again(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    run("install", database=url)
    run("webhooks", "create", "--name", "app", "--url", "https://app.example.com/", database=url)
    delivery_id = asyncio.run(_failed_delivery(url))

    [logged] = json.loads(run("webhooks", "deliveries", "app", "--json", database=url).stdout)
    redelivered = run("webhooks", "redeliver", str(delivery_id), database=url)
    line = last_line(run("webhooks", "deliveries", "app", database=url))

    assert (logged["id"], logged["event"], logged["status"], logged["answer_code"]) == (
        delivery_id,
        "articles.update",
        "failed",
        500,
    )
    assert (logged["tries"], logged["next_try_at"]) == (8, None)
    assert redelivered.returncode == 0 and f"delivery {delivery_id} (articles.update)" in redelivered.stdout
    assert line.startswith(f"{delivery_id}\tarticles.update\tid=7\tpending\tanswer=500\ttries=0\tnext=")


async def _failed_delivery(url: str) -> int:
    """A delivery whose tries ran out, as the worker leaves it."""
    from pb_headless.database.dialect import utcnow
    from pb_headless.tables import webhook_tables

    async with Database(url) as database:
        [webhook] = await WebhookStore(database).list()
        values = {
            "webhook_id": webhook.id,
            "position": 1,
            "message_id": "msg_test",
            "object_name": "articles",
            "event": "update",
            "row_key": "7",
            "changed_at": utcnow(),
            "status": "failed",
            "tries": 8,
            "answer_code": 500,
            "created_at": utcnow(),
        }
        return int(await database.execute(webhook_tables.deliveries.insert().values(**values)))
