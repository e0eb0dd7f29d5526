"""The delivery worker each `HeadlessAPI` runs in the background: fan out new changes, claim due
deliveries, try them, record each answer (docs/webhooks.md, "How deliveries work").

Each try runs as a task of its own: the worker claims again as soon as a place is free, never waiting
for a step's slowest try, and one endpoint holds at most `per_endpoint` of the `batch` places, so a
receiver that hangs for the whole 10 s of every try delays only its own deliveries."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

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
        self.sender = Sender(self.options.try_timeout, self.options.batch)
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._tries: dict[int, set[asyncio.Task[None]]] = {}  # endpoint id → its tries under way
        self._finished = asyncio.Event()  # a try ended: a place is free
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
            await _finish(task)
        tries = [attempt for attempts in self._tries.values() for attempt in attempts]
        for attempt in tries:
            await _finish(attempt)
        await self.sender.aclose()

    async def run_once(self) -> int:
        """Fan out what is new, then make the due tries and wait for them; returns the number made."""
        tries = await self._start_tries()
        if tries:
            await asyncio.wait(tries)
        return len(tries)

    @property
    def under_way(self) -> int:
        return sum(len(tries) for tries in self._tries.values())

    async def _start_tries(self) -> list[asyncio.Task[None]]:
        """Fan out what is new, claim what fits in the free places, and start those tries."""
        free = self.options.batch - self.under_way
        if free <= 0 or not await enabled_endpoints(self.database):
            return []  # an idle site's database stays idle: no lock is taken, nothing is written
        if time.monotonic() - self._pruned_at >= PRUNE_EVERY:
            self._pruned_at = time.monotonic()
            await prune_deliveries(self.database, utcnow() - self.options.keep_log)
        snapshot = await self.snapshot()
        await fan_out(self.database, snapshot.catalog)
        busy = {endpoint: len(tries) for endpoint, tries in self._tries.items()}
        per_endpoint = self.options.per_endpoint
        claimed = await claim(
            self.database, utcnow(), self.options.lease, free, per_endpoint=per_endpoint, busy=busy
        )
        if not claimed:
            return []
        endpoints = await endpoints_by_id(self.database, {delivery.webhook_id for delivery in claimed})
        allow_private = is_on(snapshot.settings.get(ALLOW_PRIVATE_SETTING))
        return [
            self._start(delivery.webhook_id, self._try(snapshot, delivery, endpoint, allow_private))
            for delivery in claimed
            if (endpoint := endpoints.get(delivery.webhook_id)) is not None
        ]

    def _start(self, endpoint: int, attempt: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self._logged_try(attempt))
        self._tries.setdefault(endpoint, set()).add(task)

        def done(_: asyncio.Task[None]) -> None:
            tries = self._tries.get(endpoint, set())
            tries.discard(task)
            if not tries:
                self._tries.pop(endpoint, None)
            self._finished.set()

        task.add_done_callback(done)
        return task

    async def _logged_try(self, attempt: Coroutine[Any, Any, None]) -> None:
        try:
            await attempt
        except Exception as error:  # the database went away mid-try: the lease brings it back
            self._log_once(error)

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
            started = 0
            self._finished.clear()
            try:
                started = len(await self._start_tries())
            except Exception as error:  # the database away, tables not installed: try again later
                self._log_once(error)
            if not started or self.under_way >= self.options.batch:
                await self._pause()

    async def _pause(self) -> None:
        """Nothing due, or no free place: the next look comes after the interval, or as soon as a try
        ends and frees a place (or the worker stops)."""
        stopping = asyncio.ensure_future(self._stopping.wait())
        finished = asyncio.ensure_future(self._finished.wait())
        await asyncio.wait(
            {stopping, finished}, timeout=self.options.poll_interval, return_when=asyncio.FIRST_COMPLETED
        )
        stopping.cancel()
        finished.cancel()

    def _log_once(self, error: Exception) -> None:
        kind = type(error).__name__
        now = time.monotonic()
        if now - self._logged.get(kind, -QUIET_REPEATS) >= QUIET_REPEATS:
            self._logged[kind] = now
            log.warning("pb_headless: the webhook worker failed a step (%s: %s)", kind, error)


async def _finish(task: asyncio.Task[None]) -> None:
    """Let a task end on its own within STOP_GRACE, then cancel it."""
    try:
        await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _why(answer: Answer) -> str:
    return answer.error or f"answer {answer.code}"
