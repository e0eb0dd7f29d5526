"""`text/event-stream` written by hand: a change stream's events (changes/stream.py `StreamSession`)
sent to the client as they come, ended when the client leaves, cut off when it stops reading."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from pb_headless.changes.stream import StreamSession

log = logging.getLogger("pb_headless")

SEND_TIMEOUT = 30.0  # a client that takes longer to take one event is cut off, never buffered for
CUT_OFF_GRACE = 1.0  # seconds the closing words to a cut-off client may wait for it to read again
CUT_OFF = b": too slow: cut off; reconnect with Last-Event-ID\n\n"


class EventStream(Response):
    """`text/event-stream` written by hand: the session's events, ended when the client leaves."""

    media_type = "text/event-stream"

    def __init__(self, session: StreamSession, release: Callable[[], None], headers: dict[str, str]) -> None:
        self.session = session
        self.release = release
        self.status_code = 200
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            cut_off = False
            if scope.get("method") != "HEAD":
                cut_off = await self._events(receive, send)
            await self._end(send, cut_off)
        finally:
            self.release()

    async def _end(self, send: Send, cut_off: bool) -> None:
        """The end of the body. A client that was cut off has not read for SEND_TIMEOUT seconds, and
        the server writes nothing more while it does not (its buffer is full): the closing comment is
        given a moment, then the response is left unfinished, and the server closes the connection
        once what it holds is written out (uvicorn logs "ASGI callable returned without completing
        response"). The stream's slot is free either way; the client reconnects with Last-Event-ID."""
        end = {"type": "http.response.body", "body": CUT_OFF if cut_off else b"", "more_body": False}
        with contextlib.suppress(Exception), anyio.move_on_after(CUT_OFF_GRACE if cut_off else SEND_TIMEOUT):
            await send(end)  # the client may be gone already

    async def _events(self, receive: Receive, send: Send) -> bool:
        """Send the session's events until it is over; True when the client was cut off as too slow."""

        async def emit(data: bytes) -> None:
            with anyio.fail_after(SEND_TIMEOUT):
                await send({"type": "http.response.body", "body": data, "more_body": True})

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                # Not a cancellation: one in the middle of a SQLite read would leave its lock behind.
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.session.leave()

            group.start_soon(watch)
            try:
                await self.session.run(emit)
            except TimeoutError:
                log.info("pb_headless: a change stream's client was too slow and was cut off")
                return True
            except Exception:  # the database went away: the client reconnects with Last-Event-ID
                log.warning("pb_headless: a change stream ended on an error", exc_info=True)
            finally:
                group.cancel_scope.cancel()
        return False
