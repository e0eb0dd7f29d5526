"""The webhooks section's tools for an endpoint that exists: edit it (secret and log kept), send a test
event, see a failing endpoint as failing, and a name that is not published refused with the nearest one."""

from __future__ import annotations

import re
import sys

import sqlalchemy as sa
from standardwebhooks import Webhook

from pb_headless.tables import webhook_tables
from pb_headless.webhooks.store import WebhookStore
from tests.webhooks.receiver import running_receiver

FORM = "/mgr/pb/webhooks"
SECRET = re.compile(r'id="secret-value">(whsec_[A-Za-z0-9+/=]+)<')


async def _create(browser, url: str = "https://hooks.example.com/pb", **fields) -> str:
    data = {"name": "indexer", "url": url, "objects": ["articles"], "events": ["create", "update"], **fields}
    answer = await browser.submit(FORM, data, form_page=FORM)
    assert answer.status_code == 303, answer.text
    return SECRET.search((await browser.get(answer.headers["location"])).text).group(1)


async def _stored_secret(database) -> str:
    table = webhook_tables.webhooks
    return await database.fetch_val(sa.select(table.c.secret).where(table.c.name == "indexer"))


async def test_an_edit_changes_url_objects_events_and_state_and_keeps_the_secret_and_log(browser):
    database = browser.site.database
    secret = await _create(browser)
    await database.execute(webhook_tables.deliveries.insert().values(**_failed_row(await _id(database))))
    page = await browser.get(f"{FORM}/edit?name=indexer")
    data = {"url": "https://hooks.example.com/v2", "objects": ["articles", "authors"], "events": ["delete"]}
    answer = await browser.submit(f"{FORM}/edit?name=indexer", data, form_page=FORM)
    listing = await browser.get(answer.headers["location"])

    assert page.status_code == 200 and 'value="https://hooks.example.com/pb"' in page.text
    assert 'value="articles" checked' in page.text and 'name="enabled" value="yes" checked' in page.text
    assert answer.status_code == 303 and "secret and its delivery log are kept" in listing.text
    webhook = await WebhookStore(database).get("indexer")
    assert (webhook.url, webhook.objects, webhook.events) == (
        data["url"],
        ("articles", "authors"),
        ("delete",),
    )
    assert not webhook.enabled  # the box was not ticked
    assert await _stored_secret(database) == secret
    assert len(await WebhookStore(database).deliveries("indexer")) == 1


async def test_an_edit_or_a_new_webhook_naming_an_unpublished_object_is_refused_with_the_nearest(
    sqlite_browser,
):
    browser = sqlite_browser
    await _create(browser)
    edit = await browser.submit(
        f"{FORM}/edit?name=indexer", {"url": "https://x.example/", "objects": "artciles", "events": "create"}
    )
    create = await browser.submit(
        FORM, {"name": "other", "url": "https://x.example/", "objects": "artciles", "events": "create"}
    )

    for answer in (edit, create):
        assert answer.status_code == 422
        assert "Unknown object &#39;artciles&#39;: did you mean &#39;articles&#39;?" in answer.text
    assert (await WebhookStore(browser.site.database).get("indexer")).url == "https://hooks.example.com/pb"
    assert [item.name for item in await WebhookStore(browser.site.database).list()] == ["indexer"]


async def test_send_test_event_posts_a_signed_articles_test_and_the_log_shows_it_with_its_times(browser):
    await browser.site.api.settings.set("service_webhooks_allow_private", "yes")
    async with running_receiver() as receiver:
        secret = await _create(browser, url=receiver.url)
        answer = await browser.submit(f"{FORM}/test", {"name": "indexer"}, form_page=FORM)
        log = await browser.get(answer.headers["location"])

    [post] = receiver.received
    assert Webhook(secret).verify(post.body, post.headers)["type"] == "articles.test"
    assert "Test event articles.test sent: answered 200." in log.text
    row = log.text[log.text.index('data-label="Event">') :]
    assert ">test</span>" in row and "success" in row
    for column in ("Created", "Last try", "Next try"):
        assert f"<th>{column}</th>" in log.text
    assert re.search(r'data-label="Last try">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC', row)


async def test_a_failing_endpoint_is_shown_failing_with_its_last_error_not_pending(sqlite_browser):
    browser = sqlite_browser
    await browser.site.api.settings.set("service_webhooks_allow_private", "yes")
    async with running_receiver() as receiver:
        await _create(browser, url=receiver.url)
        receiver.status = 503
        answer = await browser.submit(f"{FORM}/test", {"name": "indexer"}, form_page=FORM)
        log = await browser.get(answer.headers["location"])
    listing = await browser.get(FORM)

    assert "Test event articles.test failed: answer 503." in log.text
    cell = listing.text[listing.text.index('data-label="Last delivery">') :].split("</td>")[0]
    assert '<span class="tag off"' in cell and ">failing</span>" in cell and "answer 503" in cell
    assert "pending" not in cell
    assert "Last error: answer 503" in log.text


async def test_without_the_sender_a_new_webhook_is_refused_with_the_command_that_installs_it(
    sqlite_browser, monkeypatch
):
    monkeypatch.setitem(sys.modules, "httpcore", None)  # as if pb_headless[webhooks] were missing
    answer = await sqlite_browser.submit(
        FORM, {"name": "x", "url": "https://x.example/", "events": "create"}, form_page=FORM
    )
    assert answer.status_code == 422
    assert "pip install &#39;pb_headless[webhooks]&#39;" in answer.text
    assert await WebhookStore(sqlite_browser.site.database).list() == []


async def test_editing_a_webhook_that_does_not_exist_is_a_404(sqlite_browser):
    assert (await sqlite_browser.get(f"{FORM}/edit?name=nobody")).status_code == 404


async def _id(database) -> int:
    return (await WebhookStore(database).get("indexer")).id


def _failed_row(webhook_id: int) -> dict:
    from pb_headless.database.dialect import utcnow

    return {
        "webhook_id": webhook_id,
        "position": 1,
        "message_id": "msg_kept",
        "object_name": "articles",
        "event": "update",
        "row_key": "7",
        "changed_at": utcnow(),
        "status": "failed",
        "tries": 8,
        "created_at": utcnow(),
    }
