"""Request bodies, read whole and within a time limit before any database connection is taken.

A client that announces a body and then stalls must cost the API nothing but a coroutine: it holds
no connection and delays nobody (docs/hardening.md). What went wrong with a body is kept, not raised,
and answered where the order of checks puts body errors: after the token, object, operation and
scope checks (docs/endpoints.md) — except a body that never arrives, which is answered at once with 408.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect
from starlette.types import Message, Receive, Scope

from pb_headless.errors import ApiError, BadRequest, PayloadTooLarge

MAX_BODY_BYTES = 1024 * 1024
_BODILESS = frozenset({"GET", "HEAD", "OPTIONS"})
_LONGEST_LENGTH = 19  # digits; anything longer is not a length a client means


@dataclass(frozen=True, slots=True)
class Body:
    """The bytes of a request body, or why there are none to use."""

    content: bytes = b""
    problem: ApiError | None = None

    def bytes(self) -> bytes:
        """The content; raises the body's problem (413, or 400 for a malformed Content-Length)."""
        if self.problem is not None:
            raise self.problem
        return self.content


NO_BODY = Body()


class BodyTimeout(Exception):
    """The body did not arrive within the body time limit (answered as 408 `request_timeout`)."""


async def read_body(scope: Scope, receive: Receive, *, limit: int, timeout: float) -> Body:
    """The whole body of a request that may carry one; `BodyTimeout` when it does not arrive in time."""
    if scope["method"] in _BODILESS:
        return NO_BODY
    declared = Headers(scope=scope).get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit() and len(declared) <= _LONGEST_LENGTH):
            return Body(problem=BadRequest("The Content-Length header is not a number of bytes."))
        if int(declared) > limit:
            return Body(problem=PayloadTooLarge())
    try:
        async with asyncio.timeout(timeout):
            return await _receive_all(receive, limit)
    except TimeoutError:
        raise BodyTimeout() from None


async def _receive_all(receive: Receive, limit: int) -> Body:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return Body(problem=PayloadTooLarge())
        chunks.append(chunk)
        if not message.get("more_body", False):
            return Body(b"".join(chunks))


def replaying(body: Body, receive: Receive) -> Receive:
    """A `receive` that hands the body already read to an endpoint that reads it again (custom routes)."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body.content, "more_body": False}
        return await receive()  # after the body: the client's disconnect, as the server reports it

    return replay
