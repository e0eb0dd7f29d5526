"""`kill -9` of an instance process during deliveries: after a restart, every event is delivered."""

from __future__ import annotations

import asyncio
import signal

import pytest

from pb_headless import SettingsStore
from pb_headless.webhooks.store import WebhookStore
from tests.support.demo import articles, create_demo
from tests.support.server import free_port, running, uvicorn_command
from tests.webhooks.changes import create_row, with_change_log
from tests.webhooks.receiver import running_receiver

pytestmark = pytest.mark.slow
EVENTS = 40
WAIT = 60.0  # seconds the instances may take before the test gives up


def delivered(receiver) -> set[str]:
    return {post.headers["webhook-id"] for post in receiver.accepted}


async def until(condition, what: str) -> None:
    for _ in range(int(WAIT / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"waited {WAIT:g} s for {what}")


async def test_every_event_is_delivered_after_an_instance_is_killed_during_deliveries(database, tmp_path):
    await create_demo(database)
    await with_change_log(database)
    await SettingsStore(database).set("service_webhooks_allow_private", "yes")  # the receiver is on loopback
    environment = {"PB_TEST_SERVER_DATABASE": str(database.url)}
    async with running_receiver() as receiver:
        receiver.delay = 0.2  # tries stay in flight long enough to be cut short
        await WebhookStore(database).create("site", receiver.url)
        for number in range(100, 100 + EVENTS):
            await create_row(database, articles, {"id": number, "title": f"Row {number}", "published": True})

        port = free_port()
        command = uvicorn_command("tests.webhooks.instance_app:app", port)
        with running(command, environment, tmp_path / "first.log") as first:
            await until(lambda: len(receiver.received) >= 5, "the first deliveries")
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        cut_short = len(receiver.received)
        with running(command, environment, tmp_path / "second.log"):
            await until(lambda: len(delivered(receiver)) >= EVENTS, "every event after the restart")
            # The receiver notes a POST before its answer leaves: the instance records the last
            # successes a moment later, and is stopped only once it has.
            for _ in range(int(WAIT / 0.05)):
                statuses = {delivery.status for delivery in await WebhookStore(database).deliveries("site")}
                if statuses == {"success"}:
                    break
                await asyncio.sleep(0.05)

    deliveries = await WebhookStore(database).deliveries("site")
    assert cut_short < EVENTS  # the kill came in the middle
    assert delivered(receiver) == {delivery.message_id for delivery in deliveries}
    assert len(deliveries) == EVENTS and {delivery.status for delivery in deliveries} == {"success"}
