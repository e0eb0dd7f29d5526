"""The webhooks section of pb_headless.admin (docs/webhooks.md), through the example site."""

from __future__ import annotations

import re

from pb_headless.database.dialect import utcnow
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.store import WebhookStore

SECRET = re.compile(r'id="secret-value">(whsec_[A-Za-z0-9+/=]+)<')
FORM = "/mgr/pb/webhooks"


async def create(browser, **fields):
    data = {"name": "indexer", "url": "https://hooks.example.com/pb", "events": ["create", "update"]}
    data.update(fields)
    return await browser.submit(FORM, data, form_page=FORM)


async def test_a_new_webhook_shows_its_secret_once_and_the_list_never_shows_it(sqlite_browser):
    browser = sqlite_browser
    answer = await create(browser, objects=["articles"])
    assert answer.status_code == 303 and "/webhooks/secret?" in answer.headers["location"]
    page = await browser.get(answer.headers["location"])
    again = await browser.get(answer.headers["location"])
    listing = (await browser.get(FORM)).text

    secret = SECRET.search(page.text)
    assert page.status_code == 200 and secret and page.headers["cache-control"] == "no-store"
    assert again.status_code == 410 and secret.group(1) not in again.text
    assert "indexer" in listing and "https://hooks.example.com/pb" in listing
    assert secret.group(1) not in listing and secret.group(1)[6:] not in listing
    [webhook] = await WebhookStore(browser.site.database).list()
    assert (webhook.objects, webhook.events) == (("articles",), ("create", "update"))


async def test_a_private_address_is_registered_with_a_warning_next_to_the_secret(sqlite_browser):
    answer = await create(sqlite_browser, url="http://localhost:9000/hook")
    page = await sqlite_browser.get(answer.headers["location"])
    assert SECRET.search(page.text)
    assert "The destination localhost is a private, loopback or link-local address" in page.text


async def test_a_refused_webhook_is_answered_with_the_reason_and_the_values_kept(sqlite_browser):
    answer = await create(sqlite_browser, url="ftp://files.example.com/")
    assert answer.status_code == 422
    assert "is not an http:// or https:// URL" in answer.text and 'value="indexer"' in answer.text


async def test_the_form_takes_a_filter_and_refuses_one_the_object_does_not_take(sqlite_browser):
    refused = await create(sqlite_browser, objects=["articles"], filter="filter[nothing]=1")
    assert refused.status_code == 422 and "does not filter by filter[nothing]" in refused.text
    assert 'value="filter[nothing]=1"' in refused.text
    made = await create(sqlite_browser, objects=["articles"], filter="filter[id]=1")
    assert made.status_code == 303, made.text
    [webhook] = await WebhookStore(sqlite_browser.site.database).list()
    assert webhook.filter == "filter[id]=1"


async def test_a_form_without_the_csrf_token_is_refused(sqlite_browser):
    browser = sqlite_browser
    fields = {"name": "x", "url": "https://x.example/", "events": "create"}
    answer = await browser.client.post(FORM, data=fields)
    assert answer.status_code == 403
    assert await WebhookStore(browser.site.database).list() == []


async def test_disable_enable_and_delete_from_the_list(sqlite_browser):
    browser = sqlite_browser
    await create(browser)
    store = WebhookStore(browser.site.database)
    for action, enabled in (("disable", False), ("enable", True)):
        answer = await browser.submit(f"{FORM}/action", {"name": "indexer", "action": action}, form_page=FORM)
        assert answer.status_code == 303
        assert (await store.get("indexer")).enabled is enabled
    await browser.submit(f"{FORM}/action", {"name": "indexer", "action": "delete"}, form_page=FORM)
    assert await store.list() == []
    assert "No webhook yet" in (await browser.get(FORM)).text


async def test_the_delivery_log_shows_status_answer_time_and_tries_and_redelivers(sqlite_browser):
    browser = sqlite_browser
    await create(browser)
    delivery_id = await _failed_delivery(browser.site.database)
    log = await browser.get(f"{FORM}/deliveries?name=indexer")
    row = log.text[log.text.index(f'data-label="Id">{delivery_id}<') :]
    answer = await browser.submit(
        f"{FORM}/redeliver", {"name": "indexer", "delivery": str(delivery_id)}, form_page=FORM
    )
    after = await browser.get(answer.headers["location"])

    assert "articles.update" in row and "failed" in row and ">502<" in row and "1200 ms" in row
    assert f"Delivery {delivery_id} (articles.update) will be tried again" in after.text
    assert (await WebhookStore(browser.site.database).delivery(delivery_id)).status == "pending"


async def test_the_switch_for_private_destinations_changes_the_setting(sqlite_browser):
    browser = sqlite_browser
    settings = browser.site.api.settings
    await browser.submit(f"{FORM}/private", {"allow": "yes"}, form_page=FORM)
    assert await settings.get("service_webhooks_allow_private") == "yes"
    await browser.submit(f"{FORM}/private", {"allow": "no"}, form_page=FORM)
    assert await settings.get("service_webhooks_allow_private") == "no"


async def _failed_delivery(database) -> int:
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
        "answer_code": 502,
        "duration_ms": 1200,
        "created_at": utcnow(),
    }
    return int(await database.execute(webhook_tables.deliveries.insert().values(**values)))
