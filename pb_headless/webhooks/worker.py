"""The delivery worker each `HeadlessAPI` runs in the background: fan out new changes, claim due
deliveries, try them, record each answer (docs/webhooks.md, "How deliveries work")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from databases import Database

from pb_headless.database.dialect import dialect_name, utcnow
from pb_headless.settings import is_on
from pb_headless.state.snapshot import Snapshot
from pb_headless.webhooks.claims import claim
from pb_headless.webhooks.destinations import ALLOW_PRIVATE_SETTING
from pb_headless.webhooks.options import WebhookOptions
from pb_headless.webhooks.outbox import enabled_endpoints, fan_out
from pb_headless.webhooks.payload import event_body
from pb_headless.webhooks.pruning import prune_deliveries
from pb_headless.webhooks.records import DeliveryInfo
from pb_headless.webhooks.results import Endpoint, endpoints_by_id, record_answer
from pb_headless.webhooks.sender import Answer, Sender
from pb_headless.webhooks.signing import signed_headers

log = logging.getLogger("pb_headless")
QUIET_REPEATS = 60.0  # the same failure of the loop is logged at most once a minute
PRUNE_EVERY = 60.0  # seconds between two prunings of the delivery log
# On shutdown the worker finishes its database statements (a connection cancelled mid-statement may
# never go back to the pool, and the pool's close would then wait for it) and abandons its HTTP tries;
# only a step still running after this many seconds is cancelled.
STOP_GRACE = 5.0


class WebhookWorker:
    """Started by `HeadlessAPI.startup` and stopped by its shutdown; `run_once` is one step."""

    def __init__(
        self,
        database: Database,
        snapshot: Callable[[], Awaitable[Snapshot]],
        options: WebhookOptions | None = None,
    ) -> None:
        self.database = database
        self.snapshot = snapshot
        self.options = options or WebhookOptions()
        self.sender = Sender(self.options.try_timeout)
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._logged: dict[str, float] = {}
        self._pruned_at = -PRUNE_EVERY

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._stopping = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="pb_headless webhooks")

    async def stop(self) -> None:
        """Stop promptly: tries in flight are abandoned (each keeps its lease and is made again later:
        at least once), statements under way are finished."""
        task, self._task = self._task, None
        self._stopping.set()
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.sender.aclose()

    async def run_once(self) -> int:
        """Fan out what is new, then make the due tries; returns the number of tries made."""
        if not await enabled_endpoints(self.database):
            return 0  # an idle site's database stays idle: no lock is taken, nothing is written
        if time.monotonic() - self._pruned_at >= PRUNE_EVERY:
            self._pruned_at = time.monotonic()
            await prune_deliveries(self.database, utcnow() - self.options.keep_log)
        snapshot = await self.snapshot()
        await fan_out(self.database, snapshot.catalog)
        claimed = await claim(self.database, utcnow(), self.options.lease, self.options.batch)
        if not claimed:
            return 0
        endpoints = await endpoints_by_id(self.database, {delivery.webhook_id for delivery in claimed})
        allow_private = is_on(snapshot.settings.get(ALLOW_PRIVATE_SETTING))
        await asyncio.gather(
            *(
                self._try(snapshot, delivery, endpoints[delivery.webhook_id], allow_private)
                for delivery in claimed
                if delivery.webhook_id in endpoints
            )
        )
        return len(claimed)

    async def _try(
        self, snapshot: Snapshot, delivery: DeliveryInfo, endpoint: Endpoint, allow_private: bool
    ) -> None:
        dialect = dialect_name(self.database)
        body = await event_body(self.database, dialect, snapshot.catalog, delivery)
        headers = signed_headers(endpoint.secret, delivery.message_id, int(time.time()), body)
        answer = await self._post_unless_stopping(endpoint.url, headers, body, allow_private)
        if answer is None:
            return  # shutting down: the lease brings the delivery back
        await record_answer(self.database, delivery, answer, self.options)
        if not answer.succeeded:
            log.info("pb_headless: webhook '%s' try %s failed: %s", endpoint.name, delivery.id, _why(answer))

    async def _post_unless_stopping(
        self, url: str, headers: dict[str, str], body: bytes, allow_private: bool
    ) -> Answer | None:
        post = asyncio.ensure_future(self.sender.post(url, headers, body, allow_private=allow_private))
        stopping = asyncio.ensure_future(self._stopping.wait())
        done, _ = await asyncio.wait({post, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if post in done:
            return post.result()
        post.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await post
        return None

    async def _run(self) -> None:
        while not self._stopping.is_set():
            made = 0
            try:
                made = await self.run_once()
            except Exception as error:  # the database away, tables not installed: try again later
                self._log_once(error)
            if made < self.options.batch:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self.options.poll_interval)

    def _log_once(self, error: Exception) -> None:
        kind = type(error).__name__
        now = time.monotonic()
        if now - self._logged.get(kind, -QUIET_REPEATS) >= QUIET_REPEATS:
            self._logged[kind] = now
            log.warning("pb_headless: the webhook worker failed a step (%s: %s)", kind, error)


def _why(answer: Answer) -> str:
    return answer.error or f"answer {answer.code}"
