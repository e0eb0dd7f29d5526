"""A demo site with webhooks on each database, its worker driven step by step, and a loopback receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from databases import Database

from pb_headless.webhooks.options import WebhookOptions
from pb_headless.webhooks.store import WebhookStore
from pb_headless.webhooks.worker import WebhookWorker
from tests.support.demo import create_demo, demo_registry
from tests.support.host import Host
from tests.webhooks.changes import with_change_log
from tests.webhooks.receiver import Receiver, running_receiver

# Retries at once, so a test does not wait minutes; the defaults are the documented schedule.
FAST = WebhookOptions(retry_delays=(0, 0, 0), poll_interval=0.05, try_timeout=5, lease=30)


@dataclass
class Site:
    host: Host
    store: WebhookStore
    receiver: Receiver

    @property
    def database(self) -> Database:
        return self.host.database

    @property
    def worker(self) -> WebhookWorker:
        assert self.host.api.webhooks is not None
        return self.host.api.webhooks

    async def deliver(self, steps: int = 10) -> None:
        """Run the worker until a step makes no try (or `steps` steps)."""
        for _ in range(steps):
            if not await self.worker.run_once():
                return

    async def hook(self, name: str = "site", **options) -> str:
        _, secret = await self.store.create(name, self.receiver.url, **options)
        return secret


@pytest.fixture
async def site(database, host_factory) -> AsyncIterator[Site]:
    """On each database."""
    async for built in _site(database, host_factory):
        yield built


@pytest.fixture
async def sqlite_site(sqlite_database, host_factory) -> AsyncIterator[Site]:
    """For behaviour that does not depend on the database."""
    async for built in _site(sqlite_database, host_factory):
        yield built


async def _site(database: Database, host_factory) -> AsyncIterator[Site]:
    await create_demo(database)
    host = await host_factory(database, demo_registry(), webhooks=FAST)
    await with_change_log(database)
    await host.settings.set("service_webhooks_allow_private", "yes")  # the receiver is on loopback
    async with running_receiver() as receiver:
        yield Site(host, WebhookStore(database), receiver)
        await host.api.webhooks.stop()
