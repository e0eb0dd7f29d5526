"""The test event ("Send a test event" in the administration area, `pb-headless webhooks test NAME`):
one real delivery, signed with the endpoint's secret, sent at once and kept in its delivery log.

Its type is `<object>.test` and it carries no id and no record (payload.py), so a receiver that acts on
`create|update|delete` ignores it. It is sent by the caller, not by a site's worker, so the answer is
known when the call returns, even where no site is running; it is tried once, not retried. Its answer
counts for the endpoint's failure streak as a real delivery's does: a receiver that refuses the test is
shown as failing, one that accepts it as working.
"""

from __future__ import annotations

import secrets
import time

import sqlalchemy as sa
from databases import Database

from pb_headless.database.dialect import as_aware, utcnow
from pb_headless.settings import SettingsStore, is_on
from pb_headless.tables import webhook_tables
from pb_headless.webhooks.destinations import ALLOW_PRIVATE_SETTING
from pb_headless.webhooks.payload import TEST_EVENT, test_body
from pb_headless.webhooks.records import DeliveryInfo, WebhookInfo, delivery_from_row
from pb_headless.webhooks.results import note_streak
from pb_headless.webhooks.sender import TRY_TIMEOUT, Sender
from pb_headless.webhooks.signing import message_id, signed_headers

_webhooks = webhook_tables.webhooks
_deliveries = webhook_tables.deliveries


async def send_test_event(
    database: Database, webhook: WebhookInfo, object_name: str, timeout: float = TRY_TIMEOUT
) -> DeliveryInfo:
    """POST a test event to `webhook` now and record it; returns its line of the delivery log."""
    secret = await database.fetch_val(sa.select(_webhooks.c.secret).where(_webhooks.c.id == webhook.id))
    now = utcnow()
    msg_id = message_id()
    body = test_body(object_name, as_aware(now) or now)
    headers = signed_headers(secret, msg_id, int(time.time()), body)
    allow_private = is_on(await SettingsStore(database).get(ALLOW_PRIVATE_SETTING))
    sender = Sender(timeout)
    try:
        answer = await sender.post(webhook.url, headers, body, allow_private=allow_private)
    finally:
        await sender.aclose()
    row = {
        "webhook_id": webhook.id,
        # A test has no place in the change log; a negative position of its own never meets a change's
        # in the deliveries' once-key (endpoint, position, object).
        "position": -secrets.randbits(62) - 1,
        "message_id": msg_id,
        "object_name": object_name,
        "event": TEST_EVENT,
        "row_key": "",
        "changed_at": now,
        "status": "success" if answer.succeeded else "failed",
        "tries": 1,
        "next_try_at": None,
        "last_try_at": utcnow(),
        "answer_code": answer.code,
        "duration_ms": answer.duration_ms,
        "error": answer.error,
        "created_at": now,
    }
    async with database.transaction():
        await database.execute(_deliveries.insert().values(**row))
        await note_streak(database, webhook.id, answer.succeeded, now)
    found = await database.fetch_one(_deliveries.select().where(_deliveries.c.message_id == msg_id))
    assert found is not None  # written just above
    return delivery_from_row(found._mapping)
