"""The delay from a change's commit to its webhook's arrival, with the worker's default timings.

    .venv/bin/python -m bench.webhook_delay [--database sqlite|postgresql|mariadb] [--changes 60]
        [--beside-a-hanging-receiver]

One process: the site (its `HeadlessAPI` started, as a host's lifespan does) and a receiver on loopback.
Each change is committed with its change log entry, as the change log's triggers write it; the delay
is the receiver's clock at arrival minus the clock at commit. Prints p50, p99 and the maximum.
`--beside-a-hanging-receiver` registers a second endpoint whose receiver never answers (each of its
tries takes the whole 10 s answer limit): the figures are then the healthy endpoint's beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

from pb_headless import SettingsStore, WebhookStore
from tests.support.databases import open_database
from tests.support.demo import articles, create_demo, demo_registry
from tests.support.host import build_host
from tests.webhooks.changes import create_row
from tests.webhooks.receiver import hanging_receiver, running_receiver


async def measure(kind: str, count: int, hanging: bool = False) -> list[float]:
    async with contextlib.AsyncExitStack() as stack:
        if hanging:
            url, _ = await stack.enter_async_context(hanging_receiver())
        return await _measure(kind, count, url if hanging else None)


async def _measure(kind: str, count: int, hanging: str | None) -> list[float]:
    with tempfile.TemporaryDirectory() as folder:
        async with open_database(kind, Path(folder)) as database:
            await create_demo(database)
            host = await build_host(database, demo_registry(), webhooks=True)
            await SettingsStore(database).set("service_webhooks_allow_private", "yes")
            async with running_receiver() as receiver:
                await WebhookStore(database).create("bench", receiver.url)
                if hanging is not None:
                    await WebhookStore(database).create("hanging", hanging)
                await host.api.startup()
                committed: dict[str, float] = {}
                try:
                    for number in range(1000, 1000 + count):
                        await create_row(database, articles, {"id": number, "title": "t", "published": True})
                        committed[str(number)] = time.monotonic()
                        await asyncio.sleep(0.137)  # not a multiple of the poll interval
                    while len(receiver.received) < count:
                        await asyncio.sleep(0.01)
                finally:
                    await host.api.shutdown()
                    await host.client.aclose()
        arrived = {str(post.event["data"]["id"]): post.at for post in receiver.received}
    return sorted(arrived[key] - committed[key] for key in committed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", default="sqlite", choices=["sqlite", "postgresql", "mariadb"])
    parser.add_argument("--changes", type=int, default=60)
    parser.add_argument("--beside-a-hanging-receiver", action="store_true", dest="hanging")
    args = parser.parse_args()
    delays = asyncio.run(measure(args.database, args.changes, args.hanging))
    p50, p99 = statistics.median(delays), delays[min(len(delays) - 1, round(0.99 * (len(delays) - 1)))]
    print(
        f"{args.database}{' beside a hanging receiver' if args.hanging else ''}: {len(delays)} changes, "
        f"commit → webhook p50 {p50 * 1000:.0f} ms, "
        f"p99 {p99 * 1000:.0f} ms, max {delays[-1] * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
